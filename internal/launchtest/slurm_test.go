//go:build linux

package launchtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
