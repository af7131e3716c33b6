package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// world is the simulated cluster.
type world struct {
	spec  *spec.Spec
	dims  dims
	topo  *topology
	ranks []*rankState
	comm  *comm
	// dry: write nothing, only count the bytes of each dump.json (Fit)
	dry bool
	out *mw.OutSizes
	// side writes the training log and monitor output (nil: none)
	side *sidecar
	// walk reads the truth off the dumped steps as they are simulated
	walk *truth.Walk
}

// rankState is what a rank keeps from one step to the next.
type rankState struct {
	rank         int
	lay          layout
	model        *modelParts
	chains       *mw.Chains
	clk          int64
	contaminated bool
	births       []truth.Birth
	lossBad      int // first step with a non-finite loss, -1 if none
	dirName      string
	dumpBytes    int64 // size of the last dump.json written
	// passEnds: in dry runs, the dump.json offset after each micro-batch
	passEnds []int64
	// log is what the last dumped step's dump.json shows
	log *truth.Log
	// scale is the loss scale (Spec.LossScale); skipped counts the steps
	// the loss scaler skipped
	scale   float64
	skipped int
}

func newWorld(s *spec.Spec) *world {
	w := &world{spec: s, dims: specDims(s), topo: newTopology(s), out: mw.NewOutSizes(s.Ranks),
		walk: truth.NewWalk(s)}
	for r := 0; r < s.Ranks; r++ {
		st := &rankState{rank: r, chains: mw.NewChains(), lossBad: -1, scale: initialLossScale}
		st.lay = w.topo.layout(s, r)
		st.model = w.buildModel(r, st.lay)
		switch s.Format.RankDir {
		case "proc":
			st.dirName = "proc" + strconv.Itoa(1000+int(uint64(s.Seed)%60000))
		case "bare":
			st.dirName = "rank"
		default:
			st.dirName = "rank" + strconv.Itoa(r)
		}
		w.ranks = append(w.ranks, st)
	}
	return w
}

// Generate simulates the run described by sp and writes its dump under
// dir (which must be empty or absent): dir/stepN/<rank dir>/{dump,stack,
// construct}.json for every dumped step and dir/synth_truth.json, and the
// sidecar records side asks for. It returns the truth.
func Generate(sp spec.Spec, dir string, side mw.Sidecars) (*truth.Truth, error) {
	return GenerateContext(context.Background(), sp, dir, side)
}

// GenerateContext is Generate stopped when ctx is done. When it fails or
// is stopped, nothing it wrote under dir is left: a folder it made is
// removed, and a folder that was there (empty) is emptied again.
func GenerateContext(ctx context.Context, sp spec.Spec, dir string, side mw.Sidecars) (t *truth.Truth, err error) {
	if err := side.Check(dir); err != nil {
		return nil, err
	}
	sp, err = Fit(sp)
	if err != nil {
		return nil, err
	}
	s, err := sp.Normalized()
	if err != nil {
		return nil, err
	}
	made, err := prepareDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			clearDir(dir, made)
		}
	}()
	return generate(ctx, s, dir, side)
}

// generate writes the run of the normalized spec s. When it fails, the
// sidecar files it made are removed (the dump folder is its caller's).
func generate(ctx context.Context, s *spec.Spec, dir string, side mw.Sidecars) (t *truth.Truth, err error) {
	w := newWorld(s)
	if side.LogDir != "" || side.MonitorDir != "" {
		if w.side, err = newSidecar(w, side); err != nil {
			return nil, err
		}
		defer func() {
			w.side.close()
			if err != nil {
				w.side.remove()
			}
		}()
	}
	last := s.Steps[len(s.Steps)-1]
	for step := 0; step <= last; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dumped := slices.Contains(s.Steps, step)
		if err := w.runStep(step, dumped, dir); err != nil {
			return nil, err
		}
		if dumped {
			w.see(step, step == last)
		}
		if err := w.side.endStep(step); err != nil {
			return nil, err
		}
	}
	if err := w.side.close(); err != nil {
		return nil, err
	}
	runs := make([]truth.RankRun, len(w.ranks))
	for i, st := range w.ranks {
		runs[i] = truth.RankRun{Rank: st.rank, Births: st.births, LossBad: st.lossBad}
	}
	t = w.walk.Truth(runs)
	rankDir := func(rank int) string { return w.ranks[rank].dirName }
	if err := mw.ApplyDamage(dir, w.spec.Damage, rankDir, w.walk.Cuts()); err != nil {
		return nil, err
	}
	if t.Ahead, err = truth.ReadAhead(dir, w.spec, t, rankDir); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return nil, fmt.Errorf("synth: encode truth: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "synth_truth.json"), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("synth: write truth: %w", err)
	}
	return t, nil
}

func prepareDir(dir string) (made bool, err error) {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("synth: create output directory: %w", err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("synth: read output directory: %w", err)
	case len(ents) > 0:
		return false, fmt.Errorf("synth: output directory %s is not empty", dir)
	}
	return false, nil
}

// clearDir removes what a failed run wrote: dir itself when it was made,
// else what it holds.
func clearDir(dir string, made bool) {
	if made {
		os.RemoveAll(dir)
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// runStep runs one step on every rank concurrently.
func (w *world) runStep(step int, dumped bool, dir string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.comm = newComm(ctx)
	errs := make([]error, len(w.ranks))
	var wg sync.WaitGroup
	for i := range w.ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					if a, ok := v.(errAborted); ok {
						errs[i] = a
					} else {
						errs[i] = fmt.Errorf("synth: rank %d step %d: %v\n%s", i, step, v, debug.Stack())
					}
					cancel()
				}
			}()
			if err := w.runRank(i, step, dumped, dir); err != nil {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	var aborted error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if _, ok := err.(errAborted); ok {
			aborted = errors.New("synth: aborted")
			continue
		}
		return err
	}
	return aborted
}

func (e errAborted) Error() string { return "synth: aborted: " + e.err.Error() }

// runRank executes and writes one rank's step.
func (w *world) runRank(rank, step int, dumped bool, dir string) error {
	st := w.ranks[rank]
	r := &rk{w: w, st: st, rank: rank, step: step, rec: newRecorder(w, st, step, dumped),
		g:       newGen(uint64(w.spec.Seed), uint64(step), uint64(rank), 0xac7),
		collSeq: map[*group]int{}, p2pSeq: map[p2pKey]int{}, tokens: map[*module]int{}}
	rec := r.rec
	var rdir, path string
	if dumped {
		if !w.dry {
			rdir = filepath.Join(dir, "step"+strconv.Itoa(step), st.dirName)
			if err := os.MkdirAll(rdir, 0o755); err != nil {
				return fmt.Errorf("synth: %w", err)
			}
			path = filepath.Join(rdir, "dump.json")
		}
		df, err := mw.NewDumpFile(path, w.spec.Level, &w.spec.Format, w.out)
		if err != nil {
			return fmt.Errorf("synth: %w", err)
		}
		rec.df = df
		rec.stacks = mw.NewStackTable(w.spec.Format.StackVersion)
		defer func() {
			if rec.df != nil {
				rec.df.Close()
			}
		}()
	}
	if dumped && !w.dry && !w.walk.Done() {
		rec.seen = truth.NewLog()
	}
	r.runStep()
	st.log = rec.seen
	if !dumped {
		return nil
	}
	err := rec.df.Close()
	st.dumpBytes = rec.df.Offset()
	rec.df = nil
	if err != nil {
		return fmt.Errorf("synth: write dump.json: %w", err)
	}
	if w.dry {
		return nil
	}
	if err := mw.WriteStack(filepath.Join(rdir, "stack.json"), &w.spec.Format, w.out, st.chains, rec.stacks); err != nil {
		return fmt.Errorf("synth: write stack.json: %w", err)
	}
	if err := mw.WriteConstruct(filepath.Join(rdir, "construct.json"), &w.spec.Format, w.out, rec.mix, rec.construct); err != nil {
		return fmt.Errorf("synth: write construct.json: %w", err)
	}
	return nil
}

// see hands the records of a dumped step to the truth's walk.
func (w *world) see(step int, last bool) {
	rs := make([]truth.RankStep, len(w.ranks))
	for i, st := range w.ranks {
		rs[i] = truth.RankStep{Rank: st.rank, Log: st.log, DumpBytes: st.dumpBytes}
		st.log = nil
	}
	w.walk.See(step, last, rs)
}
