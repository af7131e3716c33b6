//go:build linux

package launchtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// python is Debian's interpreter, the one python3-torch installs torch for.
const python = "/usr/bin/python3"

// scenarios are the generated runs each launcher summarises: a tie of two
// source ranks whose sends carry the NaN to the next pipeline stage, and an
// overflow on one rank that a send carries to another stage.
var scenarios = []string{"tie-pipeline-carrier", "sendrecv-carrier"}

// markVar marks every process the tests start, and the processes those
// start in turn (the launchers' workers, slurmstepd and its tasks), with
// mark: the test binary's own value. watchdogVar makes the test binary the
// watchdog that kills them all if the test binary ends before its cleanup.
const (
	markVar     = "NANHUNT_LAUNCHTEST_MARK"
	watchdogVar = "NANHUNT_LAUNCHTEST_WATCHDOG"
)

var mark = fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())

func TestMain(m *testing.M) {
	if m := os.Getenv(watchdogVar); m != "" {
		// The test binary holds the other end of standard input: it
		// reads end of file when the test binary ends, however it ends.
		_, _ = io.Copy(io.Discard, os.Stdin)
		for _, p := range marked(m) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		os.Exit(0)
	}
	stop, err := startWatchdog()
	if err != nil {
		fmt.Fprintln(os.Stderr, "launchtest: start the watchdog:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startWatchdog starts the test binary again as the watchdog, in its own
// process group so that an interrupt of the terminal's reaches it only
// through the end of the test binary; stop closes its input and waits.
func startWatchdog() (stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), watchdogVar+"="+mark)
	cmd.Stdin = r
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	return func() { w.Close(); _ = cmd.Wait() }, nil
}

// proc is a running process.
type proc struct {
	pid int
	cmd string
}

func (p proc) String() string { return fmt.Sprintf("%d (%s)", p.pid, p.cmd) }

// marked lists the running processes whose environment holds markVar=m.
func marked(m string) []proc {
	want := []byte(markVar + "=" + m)
	ents, _ := os.ReadDir("/proc")
	var ps []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !slices.ContainsFunc(bytes.Split(env, []byte{0}), func(kv []byte) bool { return bytes.Equal(kv, want) }) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		ps = append(ps, proc{pid, strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))})
	}
	return ps
}

// noneLeft fails the test if processes it started, other than those keep
// accepts, are still running 10 s after it asks (slurmstepd ends a moment
// after srun returns), and kills them.
func noneLeft(t *testing.T, keep func(pid int) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []proc
		for _, p := range marked(mark) {
			if keep == nil || !keep(p.pid) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
			t.Errorf("still running 10 s after the launcher or the daemons ended, killed: %v", left)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestTorchrunSummarize(t *testing.T) {
	start := time.Now()
	defer func() { t.Logf("wall time %v", time.Since(start).Round(time.Millisecond)) }()
	needTorch(t)
	shim, err := filepath.Abs(filepath.Join("testdata", "torchrun.py"))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildNanhunt(t)
	torchrun := func(r *run, nodes int, rdzvID string) []string {
		return append([]string{shim, "--nnodes", "1", "--nproc_per_node", strconv.Itoa(nodes),
			"--master_addr", "127.0.0.1", "--master_port", strconv.Itoa(freePorts(t, 1)[0]), "--rdzv_id", rdzvID,
			"--monitor_interval", "0.1", "--log_dir", filepath.Join(r.dir, "torchrun-logs"),
			"--no_python", bin}, r.summarize()...)
	}
	for i, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			const nodes = 3
			r := newRun(t, bin, sc, nodes)
			if i == 0 {
				r.leaveStaleMark(t)
			}
			r.wantJob = "launchtest-" + sc
			env := append(launchEnv(t, r.dir), "OMP_NUM_THREADS=1")
			r.launch(t, "torchrun", 60*time.Second, env, python, torchrun(r, nodes, r.wantJob)...)
			r.check(t, "torchrun")
		})
	}
	// --rdzv-id is free text that torchrun passes on as TORCHELASTIC_RUN_ID:
	// one with a space is refused on every node, naming it, and nothing is
	// written (torchrun itself makes a folder of it, so a path separator
	// stops torchrun first)
	t.Run("rdzv-id with a space", func(t *testing.T) {
		r := newRun(t, bin, scenarios[1], 2)
		out := r.launchRefused(t, "torchrun", 60*time.Second, append(launchEnv(t, r.dir), "OMP_NUM_THREADS=1"), python, torchrun(r, 2, "run 7")...)
		if n := strings.Count(out, `TORCHELASTIC_RUN_ID="run 7" in the environment: want a job id`); n != 2 {
			t.Errorf("%d processes named the variable, want 2:\n%s", n, tail([]byte(out), 40))
		}
		if ents, _ := os.ReadDir(r.sums); len(ents) != 0 {
			t.Errorf("the refused processes wrote %v", ents)
		}
	})
}

func TestSlurmSummarize(t *testing.T) {
	start := time.Now()
	defer func() { t.Logf("wall time %v", time.Since(start).Round(time.Millisecond)) }()
	tools := needSlurm(t)
	bin := buildNanhunt(t)
	c := startSlurm(t, tools)
	for i, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			const nodes = 2
			r := newRun(t, bin, sc, nodes)
			if i == 0 {
				r.leaveStaleMark(t)
			}
			r.keep = c.ofDaemon
			r.launch(t, "srun", 30*time.Second, c.env(t, r.dir), tools["srun"],
				append([]string{"-N1", "-n" + strconv.Itoa(nodes), bin}, r.summarize()...)...)
			r.check(t, "slurm")
		})
	}
}

// needTorch fails the test unless /usr/bin/python3 imports torchrun's module.
func needTorch(t *testing.T) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("import torch: %v", time.Since(start).Round(time.Millisecond)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", "import torch.distributed.run")
	cmd.Env = launchEnv(t, t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("torchrun is missing: %s cannot import torch.distributed.run (%v); "+
			"Debian's python3-torch provides it, and .ci/run installs it when missing\n%s", python, err, tail(out, 20))
	}
}

// slurmTools are the programs the Slurm test runs, with the Debian package
// that has each.
var slurmTools = []struct{ name, pkg string }{
	{"srun", "slurm-client"}, {"sinfo", "slurm-client"}, {"squeue", "slurm-client"}, {"scancel", "slurm-client"},
	{"slurmctld", "slurmctld"}, {"slurmd", "slurmd"},
	{"munged", "munge"}, {"munge", "munge"}, {"unmunge", "munge"},
}

// needSlurm finds the Slurm and munge programs, in PATH or the sbin folders
// (the daemons live in /usr/sbin, which a user's PATH may lack), and fails
// the test naming the missing ones.
func needSlurm(t *testing.T) map[string]string {
	t.Helper()
	found := map[string]string{}
	var missing []string
	for _, tool := range slurmTools {
		p, err := exec.LookPath(tool.name)
		if err != nil {
			for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"} {
				if fi, err := os.Stat(filepath.Join(dir, tool.name)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					p = filepath.Join(dir, tool.name)
					break
				}
			}
		}
		if p == "" {
			missing = append(missing, fmt.Sprintf("%s (Debian package %s)", tool.name, tool.pkg))
			continue
		}
		found[tool.name] = p
	}
	if len(missing) > 0 {
		t.Fatalf("Slurm is missing: %s not found in PATH or /usr/sbin; "+
			"Debian's slurm-wlm and munge provide them, and .ci/run installs them when missing", strings.Join(missing, ", "))
	}
	return found
}

// buildNanhunt builds the command into the test's folder, with the
// environment's build settings (CGO_ENABLED, GOFLAGS).
func buildNanhunt(t *testing.T) string {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("go build: %v", time.Since(start).Round(time.Millisecond)) }()
	bin := filepath.Join(t.TempDir(), "nanhunt")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/nanhunt/nanhunt/cmd/nanhunt")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// launcherPrefixes and launcherNames are the variables by which a launcher
// tells a process its place: the test's own environment must not lend any
// to the processes the launcher under test starts (go test may itself run
// inside a job). launchEnv sets the other names anew.
var (
	launcherPrefixes = []string{"SLURM_", "SLURMD_", "SRUN_", "SALLOC_", "SBATCH_", "TORCHELASTIC_", "PET_", "OMPI_", "PMI_", "PMIX_"}
	launcherNames    = []string{"RANK", "LOCAL_RANK", "GROUP_RANK", "ROLE_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
		"GROUP_WORLD_SIZE", "ROLE_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "MASTER_PORT", "JOB_COMPLETION_INDEX",
		"HOME", "TMPDIR", "XDG_CACHE_HOME", markVar, watchdogVar}
)

// launchEnv is the test's environment without any launcher's variables,
// with HOME and TMPDIR in dir, and Python writing no bytecode caches.
func launchEnv(t *testing.T, dir string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(launcherNames, k) || slices.ContainsFunc(launcherPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		env = append(env, kv)
	}
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return append(env, markVar+"="+mark, "HOME="+home, "TMPDIR="+tmp, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "PYTHONDONTWRITEBYTECODE=1")
}

// freePorts returns n distinct TCP ports free on the loopback just now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}
