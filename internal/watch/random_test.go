package watch

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/trace"
)

// randomWatchScenarios are runs of every outcome a watch must tell apart:
// a lasting NaN across ranks, one the next step no longer shows, none,
// a tie, a NaN that a pipeline carries at the next step, damage.
var randomWatchScenarios = []string{"log-negative", "loss-scale-recovered", "legit-masks", "tie-log-negative",
	"pipeline-nan-next-step", "damage-truncated-peer", "sendrecv-carrier", "late-fault", "custom-attention-backward"}

// randomMoves replays a finished run step by step from a random one of
// its steps (the steps replayed are returned), its rank folders in a
// random order with random pauses, some of them written in flushes; at the first step some ranks may come
// only after others have begun the next one (ranks that start late), so
// that the watch may judge it before it has seen them.
func randomMoves(t *testing.T, rng *rand.Rand, src string) ([]lateWrite, map[int]bool) {
	steps := (&replayer{src: src}).steps(t)
	steps = steps[rng.Intn(len(steps)):]
	replayed := map[int]bool{}
	for _, s := range steps {
		replayed[s] = true
	}
	var moves, deferred []lateWrite
	for i, s := range steps {
		ranks := ranksIn(filepath.Join(src, "step"+strconv.Itoa(s)))
		rng.Shuffle(len(ranks), func(a, b int) { ranks[a], ranks[b] = ranks[b], ranks[a] })
		for j, r := range ranks {
			m := lateWrite{step: s, ranks: []int{r}, pause: time.Duration(rng.Intn(60)) * time.Millisecond}
			if rng.Intn(4) == 0 { // written in place in flushes, some longer than Settle
				m.flushes = time.Duration(20+rng.Intn(250)) * time.Millisecond
			}
			// at least two ranks are not late: with one alone known, its next
			// step would confirm what it shows before the others come, which
			// only the world size (Options.Expected) tells the watch to wait for
			if i == 0 && j > 1 && len(steps) > 1 && rng.Intn(3) == 0 {
				deferred = append(deferred, m)
				continue
			}
			moves = append(moves, m)
		}
		if i == 1 && len(ranks) > 0 && len(deferred) > 0 {
			// the late ranks come once the next step has begun (by a rank
			// that is not late: a rank writes its steps in order), and after
			// a while: the watch judges the first step without them
			first := len(moves) - len(ranks)
			for k := first; k < len(moves); k++ {
				if !slices.ContainsFunc(deferred, func(d lateWrite) bool { return d.ranks[0] == moves[k].ranks[0] }) {
					moves[first], moves[k] = moves[k], moves[first]
					break
				}
			}
			at := first + 1
			moves[at-1].pause = 400 * time.Millisecond
			moves = append(moves[:at], append(deferred, moves[at:]...)...)
		}
	}
	return moves, replayed
}

// A watch that follows a run written in a random order, told the world
// size or not, strict or not, ends as an offline trace of the steps
// written: the same alarm (step, op, ranks), or none,
// and the same completeness. NANHUNT_WATCH_RANDOM sets how many runs
// (default one per scenario).
func TestWatchMatchesOfflineRandom(t *testing.T) {
	runs := len(randomWatchScenarios)
	if s := os.Getenv("NANHUNT_WATCH_RANDOM"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("NANHUNT_WATCH_RANDOM=%q: %v", s, err)
		}
		runs = n
	}
	srcs := map[string]string{}
	for i := 0; i < runs; i++ {
		scenario := randomWatchScenarios[i%len(randomWatchScenarios)]
		seed := int64(1000 + i)
		if srcs[scenario] == "" {
			srcs[scenario] = generate(t, scenario) // kept for the runs after
		}
		src := srcs[scenario]
		t.Run(scenario+"/"+strconv.FormatInt(seed, 10), func(t *testing.T) {
			t.Parallel() // each replays into a folder of its own; they mostly wait
			rng := rand.New(rand.NewSource(seed))
			moves, steps := randomMoves(t, rng, src)
			// every anomaly an alarm, recovered or not, at once: with the world
			// size only, or the ranks not seen yet are not waited for
			strict := seed%2 == 1 && rng.Intn(4) == 0
			if rng.Intn(3) == 0 {
				src = cutFirstStep(t, rng, src, moves)
			}
			offline, err := trace.Run(context.Background(), trace.Options{Path: src, Steps: steps, Strict: strict})
			if err != nil {
				t.Fatal(err)
			}
			var opt Options
			opt.Trace.Strict = strict
			if seed%2 == 1 { // the world size given: every rank expected from the start
				opt.Expected = ranksIn(filepath.Join(src, "step"+strconv.Itoa(moves[0].step)))
			}
			events, res, _ := watchScriptedWith(t, src, opt, moves)
			v := res.Alarm
			switch {
			case !offline.Anomaly && v != nil:
				t.Errorf("alarm at step %d %s; offline: no anomaly", v.Origin.Step, v.Origin.Op)
			case offline.Anomaly && (v == nil || v.Origin == nil):
				t.Errorf("no alarm; offline: step %d %s ranks %v", offline.Origin.Step, offline.Origin.Op, offline.Origin.Ranks)
			case offline.Anomaly && (v.Origin.Step != offline.Origin.Step || v.Origin.Op != offline.Origin.Op || !slices.Equal(v.Origin.Ranks, offline.Origin.Ranks)):
				t.Errorf("alarm at step %d %s ranks %v; offline: step %d %s ranks %v", v.Origin.Step, v.Origin.Op, v.Origin.Ranks,
					offline.Origin.Step, offline.Origin.Op, offline.Origin.Ranks)
			}
			if v == nil && res.Complete != offline.Complete {
				t.Errorf("complete %v (unread %+v); offline %v (unread %+v)", res.Complete, res.Unread, offline.Complete, offline.Unread)
			}
			t.Logf("late events %d", len(lateEvents(events)))
			if t.Failed() {
				for _, e := range events {
					t.Logf("%s step %d status %s ranks %v late %v unread %v", e.Kind, e.Step, e.Status, e.Ranks, e.Late, e.Unread)
				}
			}
		})
	}
}

// cutFirstStep is a copy of the run src whose dump.json of one rank of the
// first step replayed (any of them, late or not) is cut in two.
func cutFirstStep(t *testing.T, rng *rand.Rand, src string, moves []lateWrite) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "damaged")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	var first []int
	for _, m := range moves {
		if m.step == moves[0].step {
			first = append(first, m.ranks...)
		}
	}
	file := rankDump(filepath.Join(dst, "step"+strconv.Itoa(moves[0].step)), first[rng.Intn(len(first))])
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
