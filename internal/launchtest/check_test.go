//go:build linux

package launchtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

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
	// a verdict joined from summaries has no origin timeline and no
	// warnings before the NaN (the calls and their statistics stay in each
	// node's dump.json): the one in one place's are left out
	if o, ok := v["origin"].(map[string]any); ok {
		delete(o, "timeline")
	}
	delete(v, "ahead")
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
