//go:build linux

package launchtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
