package synth

import (
	"bytes"
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
)

// world is the simulated cluster.
type world struct {
	spec  *Spec
	dims  dims
	topo  *topology
	ranks []*rankState
	comm  *comm
	// dry: write nothing, only count the bytes of each dump.json (Fit)
	dry bool
	out *outSizes
	// side writes the training log and monitor output (nil: none)
	side *sidecar
	// walk reads the truth off the dumped steps as they are simulated;
	// cuts are the truncation offsets of damaged dump.json files.
	walk *truthWalk
	cuts map[[2]int]int64
}

// rankState is what a rank keeps from one step to the next.
type rankState struct {
	rank         int
	lay          layout
	model        *modelParts
	chains       *chains
	clk          int64
	contaminated bool
	births       []Birth
	lossBad      int // first step with a non-finite loss, -1 if none
	dirName      string
	dumpBytes    int64 // size of the last dump.json written
	// passEnds: in dry runs, the dump.json offset after each micro-batch
	passEnds []int64
	// log is what the last dumped step's dump.json shows
	log *stepLog
	// scale is the loss scale (Spec.LossScale); skipped counts the steps
	// the loss scaler skipped
	scale   float64
	skipped int
}

// Birth is an op that created illegitimate non-finite values from clean
// inputs.
type Birth struct {
	Step, Rank  int
	Clock       int64
	Name        string // entry name, "" when not hooked
	Key         string // identifies the op across ranks
	Captured    bool
	Stage, Kind string
	end         int64 // byte offset after the entry in dump.json
}

func newWorld(s *Spec) *world {
	w := &world{spec: s, dims: specDims(s), topo: newTopology(s), out: newOutSizes(s.Ranks),
		walk: &truthWalk{}, cuts: map[[2]int]int64{}}
	for r := 0; r < s.Ranks; r++ {
		st := &rankState{rank: r, chains: newChains(), lossBad: -1, scale: initialLossScale}
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

// Generate simulates the run described by spec and writes its dump under
// dir (which must be empty or absent): dir/stepN/<rank dir>/{dump,stack,
// construct}.json for every dumped step and dir/synth_truth.json. It
// returns the truth.
func Generate(spec Spec, dir string) (*Truth, error) {
	return generate(spec, dir, Sidecars{})
}

// generate is Generate, with the sidecar outputs side asks for.
func generate(spec Spec, dir string, side Sidecars) (*Truth, error) {
	spec, err := Fit(spec)
	if err != nil {
		return nil, err
	}
	s, err := spec.Normalized()
	if err != nil {
		return nil, err
	}
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	w := newWorld(s)
	if side.LogDir != "" || side.MonitorDir != "" {
		if w.side, err = newSidecar(w, side); err != nil {
			return nil, err
		}
		defer w.side.close()
	}
	last := s.Steps[len(s.Steps)-1]
	for step := 0; step <= last; step++ {
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
	t := w.truth()
	if err := w.applyDamage(dir, t); err != nil {
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

func prepareDir(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("synth: create output directory: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("synth: read output directory: %w", err)
	case len(ents) > 0:
		return fmt.Errorf("synth: output directory %s is not empty", dir)
	}
	return nil
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
	r := &rk{w: w, st: st, rank: rank, step: step, dumped: dumped, mix: w.spec.Level == "mix", fwdOnly: w.spec.DataMode == "forward",
		g:        newGen(uint64(w.spec.Seed), uint64(step), uint64(rank), 0xac7),
		counters: map[apiKey]int{}, modCount: map[*module]int{}, cseen: map[string]bool{},
		collSeq: map[*group]int{}, p2pSeq: map[p2pKey]int{}, gradCount: map[*module]int{},
		tokens: map[*module]int{}}
	var rdir, path string
	if dumped {
		if !w.dry {
			rdir = filepath.Join(dir, "step"+strconv.Itoa(step), st.dirName)
			if err := os.MkdirAll(rdir, 0o755); err != nil {
				return fmt.Errorf("synth: %w", err)
			}
			path = filepath.Join(rdir, "dump.json")
		}
		df, err := newDumpFile(path, w.spec.Level, &w.spec.Format, w.out)
		if err != nil {
			return fmt.Errorf("synth: %w", err)
		}
		r.df = df
		r.stacks = newStackTable(w.spec.Format.StackVersion)
		defer func() {
			if r.df != nil {
				r.df.close()
			}
		}()
	}
	if dumped && !w.dry && !w.walk.done {
		r.seen = newStepLog()
	}
	r.runStep()
	st.log = r.seen
	if !dumped {
		return nil
	}
	err := r.df.close()
	st.dumpBytes = r.df.j.flushed
	r.df = nil
	if err != nil {
		return fmt.Errorf("synth: write dump.json: %w", err)
	}
	if w.dry {
		return nil
	}
	if err := writeStack(filepath.Join(rdir, "stack.json"), &w.spec.Format, w.out, st.chains, r.stacks); err != nil {
		return fmt.Errorf("synth: write stack.json: %w", err)
	}
	if err := writeConstruct(filepath.Join(rdir, "construct.json"), &w.spec.Format, w.out, r.mix, r.construct); err != nil {
		return fmt.Errorf("synth: write construct.json: %w", err)
	}
	return nil
}

// writeConstruct writes construct.json ({} for L1).
func writeConstruct(path string, f *Format, o *outSizes, mix bool, ents []cEnt) error {
	j, err := newJSONOut(path, f, o)
	if err != nil {
		return err
	}
	j.raw("{")
	if mix {
		for i, e := range ents {
			if i > 0 {
				j.raw(",")
			}
			j.nl(1)
			j.key(e.name)
			if e.parent == "" {
				j.raw("null")
			} else {
				j.str(e.parent)
			}
		}
		if len(ents) > 0 {
			j.nl(0)
		}
	}
	j.raw("}")
	return j.close()
}

// applyDamage truncates and removes files as the spec asks.
func (w *world) applyDamage(dir string, t *Truth) error {
	for _, d := range w.spec.Damage {
		rdir := filepath.Join(dir, "step"+strconv.Itoa(d.Step), w.ranks[d.Rank].dirName)
		if d.Kind != "" {
			if err := emptyDump(filepath.Join(rdir, "dump.json"), d.Kind); err != nil {
				return fmt.Errorf("synth: damage: %w", err)
			}
		}
		if cut, ok := w.cuts[[2]int{d.Step, d.Rank}]; ok {
			if err := os.Truncate(filepath.Join(rdir, "dump.json"), cut); err != nil {
				return fmt.Errorf("synth: damage: %w", err)
			}
		}
		if d.DropStack {
			if err := os.Remove(filepath.Join(rdir, "stack.json")); err != nil {
				return fmt.Errorf("synth: damage: %w", err)
			}
		}
		if d.DropConstruct {
			if err := os.Remove(filepath.Join(rdir, "construct.json")); err != nil {
				return fmt.Errorf("synth: damage: %w", err)
			}
		}
	}
	return nil
}

// emptyDump rewrites a dump.json so that it holds no entry that can be
// read, the way kind says (see Damage.Kind).
func emptyDump(path, kind string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const open = `"data": {`
	i := bytes.Index(b, []byte(open))
	if i < 0 {
		return errors.New("no data member in " + path)
	}
	head := bytes.TrimRight(b[:i], " \n")
	var out []byte
	switch kind {
	case "empty-data":
		out = append(append(slices.Clone(b[:i]), `"data": {}`...), "\n}"...)
	case "no-data":
		out = append(bytes.TrimSuffix(slices.Clone(head), []byte(",")), "\n}"...)
	case "dup-data":
		end := bytes.LastIndexByte(b, '}')
		out = append(append(slices.Clone(bytes.TrimRight(b[:end], " \n")), ",\n "+`"data": {}`...), "\n}"...)
	case "cut-header":
		out = b[:min(len(b), i+len(open)+12)]
	default:
		return fmt.Errorf("unknown damage kind %q", kind)
	}
	return os.WriteFile(path, out, 0o644)
}

// cutOf is where the spec's damage cuts a rank's dump.json at a step (-1:
// not cut), measured on the file just written; unread tells a file that
// cannot be read at all. It is called once per dumped step.
func (w *world) cutOf(step int, st *rankState) (cut int64, unread bool) {
	cut = -1
	for _, d := range w.spec.Damage {
		if d.Step != step || d.Rank != st.rank {
			continue
		}
		switch d.Kind {
		case "":
		case "dup-data":
			// damage after the entries of the first data member
			cut = st.dumpBytes
		default:
			unread = true
		}
		if d.TruncateAt > 0 {
			size := st.dumpBytes
			from := int64(0)
			if d.AfterOrigin {
				from = st.log.firstTaintEnd()
			}
			cut = from + int64(d.TruncateAt*float64(size-from))
			w.cuts[[2]int{step, st.rank}] = cut
		}
	}
	return cut, unread
}

// placeable reports whether a rank's stack.json or construct.json can
// place an entry in the optimizer, and whether its stack.json is there
// (the damage may remove them).
func (w *world) placeable(step, rank int) (placeable, stack bool) {
	stack, construct := true, w.spec.Level == "mix"
	for _, d := range w.spec.Damage {
		if d.Step == step && d.Rank == rank {
			stack = stack && !d.DropStack
			construct = construct && !d.DropConstruct
		}
	}
	return stack || construct, stack
}

// see builds the view of a dumped step and walks it.
func (w *world) see(step int, last bool) {
	if w.walk.done {
		for _, st := range w.ranks {
			st.log = nil
		}
		return
	}
	v := &stepView{step: step}
	for _, st := range w.ranks {
		cut, unread := w.cutOf(step, st)
		placeable, stack := w.placeable(step, st.rank)
		v.ranks = append(v.ranks, newRankView(st.rank, st.log, cut, unread, placeable, stack))
		st.log = nil
	}
	w.walk.step(v, last)
}
