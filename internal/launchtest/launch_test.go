//go:build linux

package launchtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"regexp"
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

// run is one generated dump, whole and split over node folders.
type run struct {
	bin      string
	scenario string
	dir      string             // the scratch folder
	whole    string             // DIR/dump: every rank folder in one place
	roots    []string           // DIR/nodes/nodeK/dump, by node
	template string             // DIR/nodes/node{node}/dump
	sums     string             // DIR/sums/
	keep     func(pid int) bool // the processes that outlive the launcher: the daemons
	// runName is the --run given to every node ("": the default, the DUMP
	// template after the launcher's job id); stale are the marks an earlier
	// job of that run left in DIR/sums; wantJob is the job id the launcher
	// must give ("": any it sets)
	runName string
	stale   []string
	wantJob string
}

// staleJob is the job id of the earlier job whose marks a run finds.
const staleJob = "an-earlier-job"

// summarize is the command line the launcher starts on every node.
func (r *run) summarize() []string {
	args := []string{"summarize", r.template, "-o", r.sums}
	if r.runName != "" {
		args = append(args, "--run", r.runName)
	}
	return args
}

// leaveStaleMark makes DIR/sums hold what an earlier job of the same run
// (same --run) leaves there once its summaries are deleted: its hidden
// mark, here after step 1 of a run whose NaN at step 0 lasted into step 1.
// A node that followed it would stop before the scenario's NaN at step 2,
// and the joined verdict would not be the one in one place.
func (r *run) leaveStaleMark(t *testing.T) {
	t.Helper()
	r.runName = "launchtest-" + r.scenario
	earlier := filepath.Join(r.dir, "earlier")
	for _, args := range [][]string{
		{"synth", "--world-size", "2", "--steps", "0-3", "--file-mb", "0.05", "--fault", "log-negative", "--fault-step", "0", "--fault-ranks", "0", "-o", earlier},
		{"summarize", earlier, "-o", r.sums, "--run", r.runName, "--job-id", staleJob, "--node-index", "0", "--nodes", "1"},
	} {
		if out, err := r.nanhunt(t, 30*time.Second, args...); err != nil {
			t.Fatalf("the earlier job: nanhunt %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.Remove(filepath.Join(r.sums, "summary-node00000.jsonl")); err != nil {
		t.Fatal(err)
	}
	r.stale, _ = filepath.Glob(filepath.Join(r.sums, ".nanhunt-lasting-*"))
	if len(r.stale) == 0 {
		t.Fatal("the earlier job left no mark")
	}
}

// newRun generates the scenario into DIR/dump and copies rank r's folders
// to the node folder r mod nodes.
func newRun(t *testing.T, bin, scenario string, nodes int) *run {
	t.Helper()
	dir := t.TempDir()
	r := &run{bin: bin, scenario: scenario, dir: dir, whole: filepath.Join(dir, "dump"),
		template: filepath.Join(dir, "nodes", "node{node}", "dump"), sums: filepath.Join(dir, "sums") + "/"}
	for k := range nodes {
		r.roots = append(r.roots, filepath.Join(dir, "nodes", fmt.Sprintf("node%d", k), "dump"))
	}
	if out, err := r.nanhunt(t, 30*time.Second, "synth", "--scenario", scenario, "-o", r.whole); err != nil {
		t.Fatalf("nanhunt synth --scenario %s: %v\n%s", scenario, err, out)
	}
	if err := split(r.whole, r.roots); err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	stepName    = regexp.MustCompile(`^step(\d+)$`)
	rankName    = regexp.MustCompile(`^rank(\d+)$`)
	summaryFile = regexp.MustCompile(`^summary-.*\.jsonl$`)
)

// split copies each stepN/rankM folder of whole to roots[M%len(roots)].
func split(whole string, roots []string) error {
	steps, err := os.ReadDir(whole)
	if err != nil {
		return err
	}
	perNode := make([]int, len(roots))
	for _, s := range steps {
		if !s.IsDir() || !stepName.MatchString(s.Name()) {
			continue
		}
		ranks, err := os.ReadDir(filepath.Join(whole, s.Name()))
		if err != nil {
			return err
		}
		for _, rk := range ranks {
			m := rankName.FindStringSubmatch(rk.Name())
			if !rk.IsDir() || m == nil {
				continue
			}
			rank, _ := strconv.Atoi(m[1])
			node := rank % len(roots)
			from := filepath.Join(whole, s.Name(), rk.Name())
			to := filepath.Join(roots[node], s.Name(), rk.Name())
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
			for _, f := range []string{"dump.json", "stack.json", "construct.json"} {
				if err := copyFile(filepath.Join(from, f), filepath.Join(to, f)); errors.Is(err, os.ErrNotExist) && f != "dump.json" {
					continue
				} else if err != nil {
					return err
				}
			}
			perNode[node]++
		}
	}
	for k, n := range perNode {
		if n == 0 {
			return fmt.Errorf("split %s: node %d got no rank folder", whole, k)
		}
	}
	return nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// nanhunt runs the binary and returns its standard output; err is an
// *exec.ExitError for a non-zero exit status, whose Stderr holds what it
// printed there.
func (r *run) nanhunt(t *testing.T, limit time.Duration, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Dir = r.dir
	cmd.Env = launchEnv(t, r.dir)
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return out, fmt.Errorf("still running after %v: %w", limit, err)
	}
	return out, err
}

// launch runs a launcher that starts the summarising processes.
func (r *run) launch(t *testing.T, launcher string, limit time.Duration, env []string, name string, args ...string) {
	t.Helper()
	start := time.Now()
	out, err := r.start(t, launcher, limit, env, name, args...)
	if err != nil {
		t.Fatalf("%s: %s %s: %v\n%s", launcher, name, strings.Join(args, " "), err, tail(out, 40))
	}
	t.Logf("%s ran %d summarising processes in %v", launcher, len(r.roots), time.Since(start).Round(time.Millisecond))
}

// launchRefused runs a launcher whose summarising processes must all be
// refused, and returns what it printed.
func (r *run) launchRefused(t *testing.T, launcher string, limit time.Duration, env []string, name string, args ...string) string {
	t.Helper()
	out, err := r.start(t, launcher, limit, env, name, args...)
	if err == nil {
		t.Fatalf("%s: %s %s succeeded; want its processes refused\n%s", launcher, name, strings.Join(args, " "), tail(out, 40))
	}
	return string(out)
}

// start runs a launcher until it ends, within limit, and returns its
// output and its error.
func (r *run) start(t *testing.T, launcher string, limit time.Duration, env []string, name string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = r.dir
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	t.Cleanup(func() { noneLeft(t, r.keep) })
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s was still running after %v (killed)\n%s", launcher, limit, tail(out, 40))
	}
	return out, err
}

// summaryHeader is the first line of a summary.
type summaryHeader struct {
	Header *struct {
		Schema   string `json:"schema"`
		Run      string `json:"run"`
		DumpPath string `json:"dump_path"`
		Node     struct {
			Index    *int   `json:"index"`
			Count    int    `json:"count"`
			Launcher string `json:"launcher"`
		} `json:"node"`
		Job struct {
			ID   string `json:"id"`
			From string `json:"from"`
		} `json:"job"`
	} `json:"header"`
}

// check holds the summaries to one per node from the launcher, and the
// verdict joined from them to the one the whole dump gives.
func (r *run) check(t *testing.T, launcher string) {
	t.Helper()
	r.checkSummaries(t, launcher)
	joined := r.trace(t, r.sums, r.roots)
	whole := r.trace(t, r.whole, []string{r.whole})
	r.checkOrigin(t, joined)
	keys := map[string]bool{}
	for k := range joined {
		keys[k] = true
	}
	for k := range whole {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		a, inA := joined[k]
		b, inB := whole[k]
		if inA != inB || !reflect.DeepEqual(a, b) {
			t.Errorf("verdict field %q differs:\n  joined from the summaries: %s\n  from the rank folders in one place: %s",
				k, shown(a, inA), shown(b, inB))
		}
	}
}

func (r *run) checkSummaries(t *testing.T, launcher string) {
	t.Helper()
	entries, err := os.ReadDir(r.sums)
	if err != nil {
		t.Fatalf("no summaries: %v", err)
	}
	var want, got []string
	for k := range r.roots {
		want = append(want, fmt.Sprintf("summary-node%05d.jsonl", k))
	}
	for _, e := range entries {
		if summaryFile.MatchString(e.Name()) { // other files, such as the nodes' hidden marks, may lie there too
			got = append(got, e.Name())
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s holds the summaries %q, want %q", r.sums, got, want)
	}
	runs := map[string]bool{}
	for k, name := range want {
		line, err := firstLine(filepath.Join(r.sums, name))
		if err != nil {
			t.Fatal(err)
		}
		var h summaryHeader
		if err := json.Unmarshal(line, &h); err != nil || h.Header == nil {
			t.Fatalf("%s: the first line is no summary header (%v): %s", name, err, tail(line, 1))
		}
		hd := h.Header
		if hd.Schema != "nanhunt/summary/v1" {
			t.Errorf("%s: schema %q, want nanhunt/summary/v1", name, hd.Schema)
		}
		if n := hd.Node; n.Launcher != launcher || n.Index == nil || *n.Index != k || n.Count != len(r.roots) {
			idx := "none"
			if n.Index != nil {
				idx = strconv.Itoa(*n.Index)
			}
			t.Errorf("%s: node index %s of %d from launcher %q, want %d of %d from %q",
				name, idx, n.Count, n.Launcher, k, len(r.roots), launcher)
		}
		if hd.DumpPath != r.roots[k] {
			t.Errorf("%s: dump_path %q, want %q", name, hd.DumpPath, r.roots[k])
		}
		switch {
		case r.runName == "" && hd.Run != hd.Job.ID+":"+r.template:
			t.Errorf("%s: run %q, want the DUMP template %q after the job id %q", name, hd.Run, r.template, hd.Job.ID)
		case r.runName != "" && hd.Run != r.runName:
			t.Errorf("%s: run %q, want %q", name, hd.Run, r.runName)
		}
		if hd.Job.From != launcher || hd.Job.ID == "" || (r.wantJob != "" && hd.Job.ID != r.wantJob) {
			t.Errorf("%s: job %+v, want the id %q from %s", name, hd.Job, r.wantJob, launcher)
		}
		runs[hd.Run+" job "+hd.Job.ID] = true
	}
	if len(runs) != 1 {
		t.Errorf("the nodes named different runs or jobs: %q", slices.Sorted(maps.Keys(runs)))
	}
	r.checkMarks(t)
}

// checkMarks holds the shared folder to the marks of the launch's own job:
// the earlier job's are gone.
func (r *run) checkMarks(t *testing.T) {
	t.Helper()
	for _, m := range r.stale {
		if _, err := os.Lstat(m); err == nil {
			t.Errorf("the earlier job's mark %s is still there", filepath.Base(m))
		}
	}
	marks, _ := filepath.Glob(filepath.Join(r.sums, ".nanhunt-lasting-*"))
	for _, m := range marks {
		if data, err := os.ReadFile(m); err != nil || strings.Contains(string(data), staleJob) {
			t.Errorf("a mark of the earlier job is still there: %s %s", filepath.Base(m), data)
		}
	}
}

func firstLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("%s: no complete first line: %v", path, err)
	}
	return line, nil
}

// placeholder stands for the root of the folders read in both verdicts.
const placeholder = "<ROOT>"

// trace runs "nanhunt trace PATH --format json", which must exit with 1 (an
// anomaly), and returns the verdict with each of roots replaced by the
// placeholder.
func (r *run) trace(t *testing.T, path string, roots []string) map[string]any {
	t.Helper()
	out, err := r.nanhunt(t, 60*time.Second, "trace", path, "--format", "json")
	var ee *exec.ExitError
	switch {
	case err == nil:
		t.Fatalf("nanhunt trace %s: exit status 0, want 1 (an anomaly)\n%s", path, tail(out, 20))
	case !errors.As(err, &ee) || ee.ExitCode() != 1:
		var stderr []byte
		if ee != nil {
			stderr = ee.Stderr
		}
		t.Fatalf("nanhunt trace %s: %v, want exit status 1 (an anomaly)\n%s", path, err, tail(stderr, 20))
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("nanhunt trace %s: the JSON verdict does not decode: %v\n%s", path, err, tail(out, 20))
	}
	roots = slices.Clone(roots)
	slices.SortFunc(roots, func(a, b string) int { return len(b) - len(a) }) // a root inside another first
	return neutral(v, roots).(map[string]any)
}

// neutral replaces each of roots by the placeholder in every string and key
// of v.
func neutral(v any, roots []string) any {
	repl := func(s string) string {
		for _, r := range roots {
			s = strings.ReplaceAll(s, r, placeholder)
		}
		return s
	}
	switch x := v.(type) {
	case string:
		return repl(x)
	case []any:
		for i := range x {
			x[i] = neutral(x[i], roots)
		}
		return x
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[repl(k)] = neutral(e, roots)
		}
		return m
	}
	return v
}

// checkOrigin holds the verdict's origin to the truth the generator wrote.
func (r *run) checkOrigin(t *testing.T, verdict map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.whole, "synth_truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	type origin struct {
		Step  int    `json:"step"`
		Ranks []int  `json:"ranks"`
		Op    string `json:"op"`
	}
	var truth origin
	if err := json.Unmarshal(data, &truth); err != nil {
		t.Fatalf("synth_truth.json: %v", err)
	}
	raw, err := json.Marshal(verdict["origin"])
	if err != nil {
		t.Fatal(err)
	}
	var got origin
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("the verdict's origin %s: %v", raw, err)
	}
	if verdict["anomaly"] != true || !reflect.DeepEqual(got, truth) {
		t.Errorf("%s: the verdict joined from the summaries says anomaly %v, origin %+v; the generator injected %+v",
			r.scenario, verdict["anomaly"], got, truth)
	}
}

func shown(v any, present bool) string {
	if !present {
		return "(absent)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 3000 {
		return string(b[:3000]) + "..."
	}
	return string(b)
}

// tail is the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// cluster is a one-host Slurm cluster of the test's own.
type cluster struct {
	dir, conf string
	base      []string // the environment of the daemons and of the test's own clients
	daemons   []*daemon
}

// env is the environment of a Slurm client run from dir.
func (c *cluster) env(t *testing.T, dir string) []string {
	t.Helper()
	return append(launchEnv(t, dir), "SLURM_CONF="+c.conf)
}

// startSlurm starts munged, slurmctld and slurmd in a folder of the test's
// and waits until a job step of two tasks runs; the test's cleanup cancels
// what is left of the jobs and stops the daemons.
func startSlurm(t *testing.T, tools map[string]string) *cluster {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("Slurm up: %v", time.Since(start).Round(time.Millisecond)) }()
	dir := t.TempDir()
	// The last cleanup: after the jobs are cancelled and the daemons
	// stopped, nothing they started may be left.
	t.Cleanup(func() { noneLeft(t, nil) })
	c := &cluster{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	c.base = c.env(t, dir)
	path := func(name string) string { return filepath.Join(dir, name) }

	// munged: a new key and a socket of its own. --force: the socket's
	// folder lies in the test's temporary folder, whose parents are not
	// open to all users as munged wants.
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path("munge.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	socket := path("munge.socket")
	c.start(t, "munged", path("munged.pid"), path("munged.log"), tools["munged"], "--foreground", "--force",
		"--socket="+socket, "--key-file="+path("munge.key"), "--log-file="+path("munged.log"),
		"--pid-file="+path("munged.pid"), "--seed-file="+path("munged.seed"))
	c.waitFor(t, 20*time.Second, "munged's socket", func() (bool, string) {
		_, err := os.Stat(socket)
		return err == nil, fmt.Sprint(err)
	})
	c.waitFor(t, 20*time.Second, "munge -n | unmunge", func() (bool, string) {
		cred, err := c.output(5*time.Second, nil, tools["munge"], "--socket="+socket, "-n")
		if err != nil {
			return false, fmt.Sprintf("munge: %v %s", err, cred)
		}
		out, err := c.output(5*time.Second, bytes.NewReader(cred), tools["unmunge"], "--socket="+socket)
		return err == nil && bytes.Contains(out, []byte("Success")), fmt.Sprintf("unmunge: %v %s", err, tail(out, 3))
	})

	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".") // slurmd's node name is the short one
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 2)
	for _, d := range []string{"state", "spool"} {
		if err := os.Mkdir(path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf(`ClusterName=nanhunt
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=%[4]s
SlurmdUser=%[4]s
AuthType=auth/munge
AuthInfo=socket=%[5]s
CredType=cred/munge
StateSaveLocation=%[6]s/state
SlurmdSpoolDir=%[6]s/spool
SlurmctldPidFile=%[6]s/slurmctld.pid
SlurmdPidFile=%[6]s/slurmd.pid
SlurmctldLogFile=%[6]s/slurmctld.log
SlurmdLogFile=%[6]s/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
`, host, ports[0], ports[1], u.Username, socket, dir)
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.start(t, "slurmctld", path("slurmctld.pid"), path("slurmctld.log"), tools["slurmctld"], "-D", "-f", c.conf)
	c.start(t, "slurmd", path("slurmd.pid"), path("slurmd.log"), tools["slurmd"], "-D", "-f", c.conf, "-N", host)
	t.Cleanup(func() { c.cancelJobs(t, tools) })

	c.waitFor(t, 60*time.Second, "sinfo to show the node idle", func() (bool, string) {
		out, err := c.output(5*time.Second, nil, tools["sinfo"], "-h", "-N", "-o", "%T")
		return err == nil && strings.TrimSpace(string(out)) == "idle", fmt.Sprintf("sinfo: %v %q", err, tail(out, 3))
	})
	c.waitFor(t, 60*time.Second, "a probe srun of two tasks", func() (bool, string) {
		out, err := c.output(30*time.Second, nil, tools["srun"], "-N1", "-n2", "/bin/sh", "-c", `echo "task $SLURM_PROCID of $SLURM_NTASKS"`)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		slices.Sort(lines)
		ok := err == nil && slices.Equal(lines, []string{"task 0 of 2", "task 1 of 2"})
		return ok, fmt.Sprintf("srun: %v %s", err, tail(out, 5))
	})
	return c
}

// daemon is one of the cluster's daemons, run in the foreground as a child
// of the test.
type daemon struct {
	name, pidFile, log string
	cmd                *exec.Cmd
	done               chan struct{}
	err                error
}

// start starts a daemon and registers its stop.
func (c *cluster) start(t *testing.T, name, pidFile, log, prog string, args ...string) {
	t.Helper()
	out, err := os.Create(filepath.Join(c.dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = c.dir
	cmd.Env = c.base
	cmd.Stdout, cmd.Stderr = out, out
	// The kernel kills the daemon if the test binary dies (a panic, a
	// -timeout, a signal) before its cleanup could stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	d := &daemon{name: name, pidFile: pidFile, log: log, cmd: cmd, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		out.Close()
		close(d.done)
	}()
	c.daemons = append(c.daemons, d)
	t.Cleanup(func() { d.stop(t) })
}

// ofDaemon says whether pid is one of the daemons or descends from one.
func (c *cluster) ofDaemon(pid int) bool {
	for range 64 {
		for _, d := range c.daemons {
			if d.cmd.Process.Pid == pid {
				return true
			}
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			return false
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil || pid <= 1 {
			return false
		}
	}
	return false
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process the daemon's pid file names, which in
// the foreground is the daemon itself (when the file is missing or names
// another process, it says so and signals the daemon), and kills the
// daemon when it is still running 15 s later.
func (d *daemon) stop(t *testing.T) {
	if d.exited() {
		return
	}
	pid := d.cmd.Process.Pid
	if data, err := os.ReadFile(d.pidFile); err != nil {
		t.Logf("%s: no pid file (%v): stopping process %d", d.name, err, pid)
	} else if p, err := strconv.Atoi(strings.TrimSpace(string(data))); err != nil || p != pid {
		t.Logf("%s: pid file %s says %q, not the daemon's %d: stopping process %d", d.name, d.pidFile, data, pid, pid)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		t.Errorf("%s did not stop within 15 s of SIGTERM: killed", d.name)
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// cancelJobs cancels the jobs still known to the cluster, as a failed or
// killed srun leaves them, and waits up to 10 s for them to end.
func (c *cluster) cancelJobs(t *testing.T, tools map[string]string) {
	for i := 0; ; i++ {
		out, err := c.output(5*time.Second, nil, tools["squeue"], "-h", "-o", "%i")
		ids := strings.Fields(string(out))
		if err != nil || len(ids) == 0 {
			return
		}
		if i == 0 {
			t.Logf("cancelling the jobs left: %s", strings.Join(ids, " "))
			if out, err := c.output(5*time.Second, nil, tools["scancel"], ids...); err != nil {
				t.Logf("scancel: %v %s", err, out)
			}
		}
		if i == 50 {
			t.Errorf("jobs %s still known 10 s after scancel", strings.Join(ids, " "))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// output runs a Slurm or munge client with a time limit and returns what
// it printed on both outputs.
func (c *cluster) output(limit time.Duration, stdin io.Reader, prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = c.dir
	cmd.Env = c.base
	cmd.Stdin = stdin
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %v", limit)
	}
	return out, err
}

// waitFor polls ready every 200 ms until it holds, failing the test with
// the last state and the daemons' logs after limit or when a daemon exits.
func (c *cluster) waitFor(t *testing.T, limit time.Duration, what string, ready func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, state := ready()
		if ok {
			return
		}
		for _, d := range c.daemons {
			if d.exited() {
				t.Fatalf("%s exited (%v) while waiting for %s (%s)\n%s", d.name, d.err, what, state, c.logs())
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Slurm was not ready after %v: waiting for %s, the last try gave: %s\n%s", limit, what, state, c.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logs is the end of each daemon's log and output.
func (c *cluster) logs() string {
	var b strings.Builder
	for _, d := range c.daemons {
		for _, f := range []string{d.log, filepath.Join(c.dir, d.name+".out")} {
			data, err := os.ReadFile(f)
			if err != nil || len(bytes.TrimSpace(data)) == 0 {
				continue
			}
			fmt.Fprintf(&b, "== %s\n%s\n", f, tail(data, 15))
		}
	}
	return b.String()
}
