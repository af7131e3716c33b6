package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

// editRecord rewrites, in the summaries, the record of one rank-step with
// edit, as a hand would; it fails the test when no summary holds it.
func editRecord(t *testing.T, files []string, step, rank int, edit func(r *record)) string {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		for i, l := range lines {
			var sl summaryLine
			if json.Unmarshal(l, &sl) != nil || sl.Record == nil || sl.Record.Step != step || sl.Record.Rank != rank {
				continue
			}
			edit(sl.Record)
			out, err := json.Marshal(sl)
			if err != nil {
				t.Fatal(err)
			}
			lines[i] = append(out, '\n')
			writeTestFile(t, f, string(bytes.Join(lines, nil)))
			return f
		}
	}
	t.Fatalf("no summary holds step %d rank %d", step, rank)
	return ""
}

// claimClean makes a record say its rank held nothing non-finite.
func claimClean(r *record) {
	r.Events, r.Colls, r.Local, r.Order, r.Details, r.Suppressed = nil, nil, nil, nil, nil, nil
}

// finiteReceive makes a record say its rank received finite values from
// every collective it kept.
func finiteReceive(r *record) {
	for i := range r.Colls {
		r.Colls[i].Dest = 0
	}
}

// roleOf is the role the verdict gives a rank, "" none.
func roleOf(v *verdict.Verdict, rank int) string {
	for _, c := range v.Candidates {
		if c.Rank == rank && c.Step == v.Origin.Step {
			return c.Role
		}
	}
	return ""
}

// contradictionsOf are the warnings of a verdict that say the summaries
// contradict each other.
func contradictionsOf(v *verdict.Verdict) []verdict.Warning {
	var out []verdict.Warning
	for _, w := range v.Warnings {
		if strings.Contains(w.Message, "the summaries contradict each other") {
			out = append(out, w)
		}
	}
	return out
}

// A record edited to say what its peers' collectives contradict is a
// warning naming the step, the ranks and the summary, and the origin's
// confidence is at most medium, with the reason.
func TestJoinPeersContradict(t *testing.T) {
	for _, c := range []struct {
		name     string
		scenario string
		pick     func(v *verdict.Verdict) int // the rank whose record is edited
		edit     func(r *record)
		want     string // in the warning
	}{
		{"a receiver claims clean", "tp-clip-sgd", firstWith("received"), claimClean, "every rank of a call the same values"},
		{"a receiver says it received finite values", "tp-clip-sgd", firstWith("received"), finiteReceive, "every rank of a call the same values"},
		{"the source claims clean", "tp-clip-sgd", func(v *verdict.Verdict) int { return v.Origin.Ranks[0] }, claimClean, "every rank of a call the same values"},
		{"a sender claims clean", "sendrecv-carrier", func(v *verdict.Verdict) int { return v.Carrier.FromRanks[0] }, claimClean, "holds no call that sent a non-finite value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := scenarioDir(t, c.scenario)
			want, err := Run(context.Background(), Options{Path: dir})
			if err != nil || want.Origin == nil {
				t.Fatalf("the scenario's verdict: %v %+v", err, want)
			}
			files := summariseNodes(t, splitNodes(t, dir, 3, rand.New(rand.NewSource(5))), false)
			rank := c.pick(want)
			edited := editRecord(t, files, want.Origin.Step, rank, c.edit)
			got, err := Run(context.Background(), Options{Summaries: files})
			if err != nil {
				t.Fatal(err)
			}
			ws := contradictionsOf(got)
			if len(ws) == 0 {
				t.Fatalf("no contradiction for rank %d's edited record; warnings %+v", rank, got.Warnings)
			}
			var named bool
			for _, w := range ws {
				named = named || (w.File == edited && strings.Contains(w.Message, fmt.Sprintf("step %d:", want.Origin.Step)) &&
					strings.Contains(w.Message, fmt.Sprint(rank)) && strings.Contains(w.Message, c.want))
			}
			if !named {
				t.Errorf("no warning names %s, step %d, rank %d and %q: %+v", edited, want.Origin.Step, rank, c.want, ws)
			}
			o := got.Origin
			if o == nil || o.Confidence == "high" || !strings.Contains(strings.Join(o.Reasons, "\n"), "the summaries contradict each other at step") {
				t.Errorf("origin %+v: want confidence at most medium, with the reason", o)
			}
		})
	}
}

// firstWith picks the lowest rank the verdict gives a role at its step.
func firstWith(role string) func(v *verdict.Verdict) int {
	return func(v *verdict.Verdict) int {
		for _, c := range v.Candidates {
			if c.Step == v.Origin.Step && c.Role == role {
				return c.Rank
			}
		}
		return -1
	}
}

// allReduce is an all_reduce entry of a process group whose input and
// output statistics are in and out (a JSON number or NaN).
func allReduce(k int, group string, ranks string, in, out string) string {
	return fmt.Sprintf(`"Distributed.all_reduce.%d.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": %s, "Min": %s}], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [%s], "group_id": "%s"}}, "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": %s, "Min": %s}]}`,
		k, in, in, ranks, group, out, out)
}

// logBirth is a Torch.log call that makes NaN from finite inputs.
const logBirth = `"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.0, "Min": -1.0}], "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": NaN, "Min": NaN}]}`

// writeEntries writes a rank-step's dump.json of the task with entries.
func writeEntries(t *testing.T, root string, step, rank int, task string, entries []string) {
	t.Helper()
	dir := rankDir(root, step, rank)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "dump.json"), fmt.Sprintf("{\n \"task\": %q,\n \"level\": \"L1\",\n \"framework\": \"pytorch\",\n \"dump_data_dir\": null,\n \"data\": {\n  %s\n }\n}\n",
		task, strings.Join(entries, ",\n  ")))
}

// Records that summarize wrote never contradict each other, whatever the
// dump: a rank whose call was past its cap of kept collectives, dumps of a
// task that records only some calls, damaged and unread files in a run
// whose process groups are recorded. Each joins into the single-place
// verdict, without a warning.
func TestJoinPeersTrueRecordsNeverWarn(t *testing.T) {
	g2Calls := func(in, out string) []string {
		var es []string
		for k := range normalLimits.colls {
			es = append(es, allReduce(k, "g2", "0, 2", in, out))
		}
		return es
	}
	for _, c := range []struct {
		name string
		make func(t *testing.T) string
	}{
		{"past the cap of kept collectives", func(t *testing.T) string {
			// rank 0 fills its cap in group g2 before the call of g1 that
			// rank 1 receives its NaN from
			root := filepath.Join(t.TempDir(), "dump")
			writeEntries(t, root, 0, 0, "statistics", append(append([]string{logBirth}, g2Calls("NaN", "NaN")...), allReduce(0, "g1", "0, 1", "NaN", "NaN")))
			writeEntries(t, root, 0, 1, "statistics", []string{allReduce(0, "g1", "0, 1", "1.0", "NaN")})
			writeEntries(t, root, 0, 2, "statistics", g2Calls("1.0", "NaN"))
			return root
		}},
		{"overflow_check stops at its first overflow", func(t *testing.T) string {
			root := filepath.Join(t.TempDir(), "dump")
			writeEntries(t, root, 0, 0, "overflow_check", []string{logBirth})
			writeEntries(t, root, 0, 1, "overflow_check", []string{allReduce(0, "g1", "0, 1", "1.0", "NaN")})
			return root
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkJoin(t, c.make(t), 2, 1)
		})
	}
	damage := []struct {
		name   string
		damage func(t *testing.T, root string, v *verdict.Verdict)
	}{
		{"receiver cut in half", func(t *testing.T, root string, v *verdict.Verdict) {
			cutInHalf(t, rankFile(root, v.Origin.Step, firstWith("received")(v), "dump.json"))
		}},
		{"source cut in half", func(t *testing.T, root string, v *verdict.Verdict) {
			cutInHalf(t, rankFile(root, v.Origin.Step, v.Origin.Ranks[0], "dump.json"))
		}},
		{"receiver unreadable", func(t *testing.T, root string, v *verdict.Verdict) {
			writeTestFile(t, rankFile(root, v.Origin.Step, firstWith("received")(v), "dump.json"), "garbage")
		}},
		{"receiver without a folder", func(t *testing.T, root string, v *verdict.Verdict) {
			removeAll(t, rankDir(root, v.Origin.Step, firstWith("received")(v)))
		}},
	}
	for _, sc := range []string{"tp-clip-sgd", "sendrecv-carrier"} {
		for i, d := range damage {
			t.Run(sc+"/"+d.name, func(t *testing.T) {
				t.Parallel()
				dir := scenarioDir(t, sc)
				v, err := Run(context.Background(), Options{Path: dir})
				if err != nil || v.Origin == nil {
					t.Fatalf("the scenario's verdict: %v %+v", err, v)
				}
				d.damage(t, dir, v)
				checkJoin(t, dir, 3, int64(i))
			})
		}
	}
}
