package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/nanhunt/nanhunt/internal/realruns"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// generated holds the catalogue, written once for all tests.
var generated struct {
	once   sync.Once
	dir    string
	err    error
	truths map[string]*Truth
	errs   map[string]error
}

func catalogue(t *testing.T) (string, map[string]*Truth) {
	t.Helper()
	g := &generated
	g.once.Do(func() {
		g.dir, g.err = os.MkdirTemp("", "synth-test-")
		if g.err != nil {
			return
		}
		g.truths = map[string]*Truth{}
		g.errs = map[string]error{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for _, sc := range Scenarios() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				tr, err := Generate(sc.Spec, filepath.Join(g.dir, sc.Name))
				mu.Lock()
				g.truths[sc.Name], g.errs[sc.Name] = tr, err
				mu.Unlock()
			}()
		}
		wg.Wait()
	})
	if g.err != nil {
		t.Fatal(g.err)
	}
	return g.dir, g.truths
}

func TestMain(m *testing.M) {
	code := m.Run()
	if generated.dir != "" {
		os.RemoveAll(generated.dir)
	}
	realruns.Cleanup()
	os.Exit(code)
}

func TestCatalogue(t *testing.T) {
	dir, truths := catalogue(t)
	kinds := map[FaultKind]bool{}
	names := map[string]bool{}
	for _, sc := range Scenarios() {
		if names[sc.Name] {
			t.Errorf("duplicate scenario %s", sc.Name)
		}
		names[sc.Name] = true
		if sc.Spec.Name != sc.Name || sc.Description == "" {
			t.Errorf("%s: name or description missing", sc.Name)
		}
		if sc.Spec.Fault != nil {
			kinds[sc.Spec.Fault.Kind] = true
		}
		if err := generated.errs[sc.Name]; err != nil {
			t.Errorf("%s: %v", sc.Name, err)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, sc.Name, "synth_truth.json"))
		if err != nil {
			t.Fatal(err)
		}
		var onDisk Truth
		if err := json.Unmarshal(b, &onDisk); err != nil {
			t.Fatalf("%s: synth_truth.json: %v", sc.Name, err)
		}
		want, _ := json.Marshal(truths[sc.Name])
		got, _ := json.Marshal(&onDisk)
		if !bytes.Equal(want, got) {
			t.Errorf("%s: synth_truth.json differs from the returned truth", sc.Name)
		}
	}
	for k := LogNegative; k <= HalfTraps; k++ {
		if !kinds[k] {
			t.Errorf("no scenario for %v", k)
		}
	}
}

// rankDirs lists the rank directories of a step.
func rankDirs(t *testing.T, stepDir string) []string {
	ents, err := os.ReadDir(stepDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, filepath.Join(stepDir, e.Name()))
	}
	return out
}

var tensorKeys = []string{"type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad"}

// checkTensors verifies the key order of every tensor under v (the
// statistics keys in the spelling of the format).
func checkTensors(t *testing.T, rd, name string, v *jv, f *Format) {
	want := slices.Clone(tensorKeys)
	for i := 3; i < 7; i++ {
		switch f.StatKeys {
		case "lower":
			want[i] = strings.ToLower(want[i])
		case "upper":
			want[i] = strings.ToUpper(want[i])
		}
	}
	for _, tt := range tensorsIn(v, nil) {
		if !slices.Equal(tt.keys, want) {
			t.Errorf("%s %s: tensor keys %v", rd, name, tt.keys)
			return
		}
	}
}

var entryName = regexp.MustCompile(`^(.+)\.(\d+)\.(forward|backward)$|^Module\..+\.(forward|parameters_grad)\.(\d+)$`)

// dumpFile is a parsed dump.json.
type parsedDump struct {
	names   []string
	entries map[string]*jv
	err     error
	top     []string // the top-level keys
	badTop  bool     // not the keys msprobe writes
}

func loadDump(t *testing.T, path string) *parsedDump {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root, perr := parseFast(b)
	if perr == nil && !json.Valid(lenient(b)) {
		t.Errorf("%s: encoding/json rejects the file", path)
	}
	d := &parsedDump{entries: map[string]*jv{}, err: perr}
	data := root.get("data")
	if data == nil {
		return d
	}
	for i, k := range data.keys {
		if perr != nil && i == len(data.keys)-1 {
			break // the entry the file was cut in
		}
		d.names = append(d.names, k)
		d.entries[k] = data.vals[i]
	}
	if perr == nil {
		wantTop := []string{"task", "level", "framework", "dump_data_dir", "data"}
		if root.get("framework") == nil {
			wantTop = []string{"task", "level", "dump_data_dir", "data"}
		}
		d.top = root.keys
		if !slices.Equal(root.keys, wantTop) {
			d.badTop = true
		}
	}
	return d
}

// TestFilesWellFormed parses every file of every scenario: valid JSON
// (with bare NaN/Infinity), msprobe's key order, stacks for every forward
// entry, construct parents; and no NaN/+Inf in the steps before the fault
// (none at all in clean runs) apart from declared garbage.
func TestFilesWellFormed(t *testing.T) {
	dir, truths := catalogue(t)
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			tr := truths[sc.Name]
			if tr == nil {
				t.Skip("not generated")
			}
			damaged := map[string]Damage{}
			for _, d := range sc.Spec.Damage {
				damaged[fmt.Sprintf("step%d/rank%d", d.Step, d.Rank)] = d
			}
			cleanBefore := math.MaxInt
			if f := sc.Spec.Fault; f != nil && !f.Kind.Clean() {
				cleanBefore = f.Step
			}
			if tr.Anomaly {
				cleanBefore = min(cleanBefore, tr.Step)
			}
			for _, r := range tr.Recovered {
				cleanBefore = min(cleanBefore, r.Step)
			}
			for _, step := range sc.Spec.Steps {
				for _, rd := range rankDirs(t, filepath.Join(dir, sc.Name, fmt.Sprintf("step%d", step))) {
					rel := fmt.Sprintf("step%d/%s", step, filepath.Base(rd))
					d := checkRankDir(t, &sc.Spec, rd, damaged[rel])
					if step < cleanBefore {
						checkClean(t, rd, &sc.Spec, d)
					}
				}
			}
		})
	}
}

func checkRankDir(t *testing.T, s *Spec, rd string, dmg Damage) *parsedDump {
	d := loadDump(t, filepath.Join(rd, "dump.json"))
	cut := dmg.TruncateAt > 0 || dmg.Kind == "cut-header"
	if d.err != nil && !cut {
		t.Errorf("%s: dump.json: %v", rd, d.err)
	}
	if d.err == nil && cut {
		t.Errorf("%s: truncated dump.json parses", rd)
	}
	switch dmg.Kind {
	case "no-data":
		if slices.Contains(d.top, "data") {
			t.Errorf("%s: a data member is left: %v", rd, d.top)
		}
	case "dup-data":
		if n := len(slices.DeleteFunc(slices.Clone(d.top), func(k string) bool { return k != "data" })); n != 2 {
			t.Errorf("%s: %d data members, want 2", rd, n)
		}
	case "empty-data":
		if len(d.names) != 0 {
			t.Errorf("%s: %d entries in an empty data member", rd, len(d.names))
		}
	default:
		if d.badTop {
			t.Errorf("%s: top-level keys %v", rd, d.top)
		}
	}
	forward := map[string]bool{}
	for _, name := range d.names {
		e := d.entries[name]
		m := entryName.FindStringSubmatch(name)
		if m == nil {
			t.Errorf("%s: entry name %q", rd, name)
			continue
		}
		var want []string
		switch {
		case m[3] == "backward":
			want = []string{"input", "output"}
		case m[4] == "parameters_grad":
			want = nil
		case m[4] == "forward":
			want = []string{"input_args", "input_kwargs", "output", "parameters"}
			forward[name] = true
		default:
			want = []string{"input_args", "input_kwargs", "output"}
			forward[name] = true
		}
		if want != nil && !slices.Equal(e.keys, want) {
			t.Errorf("%s: %s keys %v", rd, name, e.keys)
		}
		checkTensors(t, rd, name, e, &s.Format)
	}
	if s.Level == "L1" {
		for name := range forward {
			if strings.HasPrefix(name, "Module.") {
				t.Errorf("%s: module entry %s at level L1", rd, name)
			}
		}
	}
	checkStackFile(t, s, rd, dmg, forward)
	checkConstructFile(t, s, rd, dmg, d)
	return d
}

// entryIO returns the input-side and output-side tensors of an entry, with
// receive buffers (input 0 of recv and all_to_all_single) left out.
func entryIO(name string, e *jv) (in, out []*jv) {
	if e == nil {
		return nil, nil
	}
	if x := e.get("input"); x != nil {
		return tensorsIn(x, nil), tensorsIn(e.get("output"), nil)
	}
	args := e.get("input_args")
	if args != nil && (strings.Contains(name, ".recv.") || strings.Contains(name, ".all_to_all_single.")) && len(args.vals) > 0 {
		args = &jv{kind: 'a', vals: args.vals[1:]}
	}
	in = tensorsIn(args, nil)
	in = tensorsIn(e.get("input_kwargs"), in)
	out = tensorsIn(e.get("output"), nil)
	if strings.Contains(name, ".all_to_all_single.") || strings.Contains(name, ".recv.") {
		if o := e.get("output"); o != nil && len(o.vals) > 0 {
			out = tensorsIn(o.vals[0], nil)
		}
	}
	return in, out
}

func rankDir(dir string, s *Spec, step, rank int) string {
	name := fmt.Sprintf("rank%d", rank)
	switch s.Format.RankDir {
	case "proc":
		ents, _ := os.ReadDir(filepath.Join(dir, fmt.Sprintf("step%d", step)))
		if len(ents) > 0 {
			name = ents[0].Name()
		}
	case "bare":
		name = "rank"
	}
	return filepath.Join(dir, fmt.Sprintf("step%d", step), name)
}

func TestTruthMatchesFiles(t *testing.T) {
	dir, truths := catalogue(t)
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			tr := truths[sc.Name]
			if tr == nil {
				t.Skip("not generated")
			}
			checkTruthFiles(t, sc.Spec, filepath.Join(dir, sc.Name), tr)
		})
	}
}

// checkTruthFiles verifies a truth against the files of the run generated
// from spec under root: the origin entry turns clean inputs into the
// truth's kind on every source rank, first_nan holds NaN, the carrier
// moves the anomaly to ranks that had none.
func checkTruthFiles(t *testing.T, spec Spec, root string, tr *Truth) {
	t.Helper()
	s, err := spec.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	clean := s.Fault == nil || s.Fault.Kind.Clean()
	if clean && (tr.Anomaly || len(tr.Recovered) > 0) {
		t.Fatalf("anomaly %v, recovered %v for fault %+v", tr.Anomaly, tr.Recovered, s.Fault)
	}
	if !tr.Anomaly {
		return
	}
	if len(tr.Ranks) == 0 || tr.Op == "" || (tr.Kind != "nan" && tr.Kind != "inf") {
		t.Fatalf("incomplete truth %+v", tr)
	}
	if tr.Tie && len(tr.Ranks) < 2 {
		t.Errorf("tie %v for ranks %v", tr.Tie, tr.Ranks)
	}
	for _, rank := range tr.Ranks {
		if tr.Unread {
			break // the origin's ranks could not be read; Op is on a receiver
		}
		d := loadDump(t, filepath.Join(rankDir(root, s, tr.Step, rank), "dump.json"))
		e := d.entries[tr.Op]
		if e == nil {
			t.Errorf("rank %d step %d: no entry %s", rank, tr.Step, tr.Op)
			continue
		}
		in, out := entryIO(tr.Op, e)
		o, i := scanTensors(out), scanTensors(in)
		switch {
		case tr.Captured && tr.Kind == "nan" && !o.nan:
			t.Errorf("rank %d: %s output holds no NaN", rank, tr.Op)
		case tr.Captured && tr.Kind == "inf" && (o.nan || !(o.pinf || o.ninf)):
			t.Errorf("rank %d: %s output is not Inf without NaN: %+v", rank, tr.Op, o)
		case tr.Captured && (i.nan || i.pinf):
			t.Errorf("rank %d: origin %s has non-finite input %+v", rank, tr.Op, i)
		case !tr.Captured && !i.any() && !o.any():
			t.Errorf("rank %d: %s shows no anomaly", rank, tr.Op)
		}
	}
	if f := tr.FirstNaN; f != nil {
		d := loadDump(t, filepath.Join(rankDir(root, s, f.Step, f.Rank), "dump.json"))
		_, out := entryIO(f.Op, d.entries[f.Op])
		if !scanTensors(out).nan {
			t.Errorf("first_nan %s has no NaN output", f.Op)
		}
	}
	if c := tr.Carrier; c != nil {
		checkCarrier(t, root, s, c, tr.Unread)
	}
}

// checkClean verifies that a dump holds no NaN or +Inf apart from the
// garbage the scenario declares, and -Inf only in masks.
func checkClean(t *testing.T, rd string, s *Spec, d *parsedDump) {
	garbage := s.Format.ReceiveBuffers == "garbage" || (s.Fault != nil && s.Fault.Kind == GarbageBuffers)
	for _, name := range d.names {
		if garbage && strings.HasPrefix(name, "Torch.empty") {
			continue
		}
		in, out := entryIO(name, d.entries[name])
		n := scanTensors(append(in, out...))
		if n.nan || n.pinf {
			t.Errorf("%s %s: non-finite %+v in a clean step", rd, name, n)
			return
		}
		if n.ninf && !legitNegInf(name) {
			t.Errorf("%s %s: -Inf outside a mask", rd, name)
			return
		}
	}
}

// legitNegInf lists the entries that carry a causal mask.
func legitNegInf(name string) bool {
	for _, p := range []string{"Torch.full.", "Torch.triu.", "Tensor.masked_fill.", "Tensor.__add__.", "Functional.softmax.", "Module."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func checkCarrier(t *testing.T, root string, s *Spec, c *Carrier, unread bool) {
	if (len(c.FromRanks) == 0 && !unread) || len(c.ToRanks) == 0 {
		t.Errorf("carrier without ranks: %+v", c)
		return
	}
	if len(c.FromRanks) == 0 {
		return // sent by ranks that could not be read
	}
	for _, r := range c.FromRanks {
		if slices.Contains(c.ToRanks, r) {
			t.Errorf("carrier rank %d both source and target", r)
		}
	}
	src := loadDump(t, filepath.Join(rankDir(root, s, c.Step, c.FromRanks[0]), "dump.json"))
	e := src.entries[c.Op]
	if e == nil {
		if src.err == nil {
			t.Errorf("carrier %s missing on rank %d", c.Op, c.FromRanks[0])
		}
		return
	}
	if in, _ := entryIO(c.Op, e); !scanTensors(in).any() {
		t.Errorf("carrier %s has finite input on source rank %d", c.Op, c.FromRanks[0])
	}
	for _, r := range c.ToRanks {
		d := loadDump(t, filepath.Join(rankDir(root, s, c.Step, r), "dump.json"))
		name := c.Op
		if strings.Contains(c.Op, ".send.") {
			name = ""
			for _, n := range d.names {
				_, out := entryIO(n, d.entries[n])
				if strings.Contains(n, ".recv.") && scanTensors(out).any() {
					name = n
					break
				}
			}
		}
		e := d.entries[name]
		if e == nil {
			t.Errorf("carrier entry %q missing on rank %d", name, r)
			continue
		}
		in, out := entryIO(name, e)
		if scanTensors(in).any() || !scanTensors(out).any() {
			t.Errorf("carrier %s on rank %d: input %+v output %+v", name, r, scanTensors(in), scanTensors(out))
		}
	}
}

// TestLenientDecoders decodes files of several formats with encoding/json
// tokens and with the fast parser the other tests use; both must agree.
func TestLenientDecoders(t *testing.T) {
	dir, _ := catalogue(t)
	for _, name := range []string{"level-mix", "fmt-nonfinite-strings", "fmt-indent4", "fmt-stack-v1", "garbage-buffers"} {
		for _, f := range []string{"dump.json", "stack.json", "construct.json"} {
			p := filepath.Join(dir, name, "step2", "rank2", f)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			a, err := parseLenient(b)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			c, err := parseFast(b)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if !sameJV(a, c) {
				t.Errorf("%s: decoders disagree", p)
			}
		}
	}
	// a cut file: both stop with an error
	b, _ := os.ReadFile(filepath.Join(dir, "damage-truncated-peer", "step2", "rank0", "dump.json"))
	if _, err := parseLenient(b); err == nil {
		t.Error("truncated dump.json decodes")
	}
}

// The same spec gives byte-identical files: the first scenario, the ones
// with the new layouts and damage, and random specs.
func TestDeterministic(t *testing.T) {
	specs := []Spec{Scenarios()[0].Spec}
	for _, sc := range Scenarios() {
		switch sc.Name {
		case "zero1-reduce-broadcast", "reducer-zero-count", "p2p-keyword-microbatch", "loss-scale-recovered", "damage-dup-data", "tie-pipeline-carrier":
			specs = append(specs, sc.Spec)
		}
	}
	for seed := int64(1); seed <= 4; seed++ {
		specs = append(specs, Random(seed))
	}
	for _, spec := range specs {
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			a, b := t.TempDir(), t.TempDir()
			if _, err := Generate(spec, a); err != nil {
				t.Fatal(err)
			}
			if _, err := Generate(spec, b); err != nil {
				t.Fatal(err)
			}
			n := 0
			err := filepath.WalkDir(a, func(p string, de os.DirEntry, err error) error {
				if err != nil || de.IsDir() {
					return err
				}
				n++
				rel, _ := filepath.Rel(a, p)
				x, _ := os.ReadFile(p)
				y, err := os.ReadFile(filepath.Join(b, rel))
				if err != nil || !bytes.Equal(x, y) {
					t.Errorf("%s differs between two runs", rel)
				}
				return nil
			})
			if err != nil || n == 0 {
				t.Fatalf("%d files: %v", n, err)
			}
		})
	}
}

// Random gives the same valid spec for the same seed, and different specs
// for different seeds.
func TestRandomSpecs(t *testing.T) {
	seen := map[string]int64{}
	for seed := int64(1); seed <= 200; seed++ {
		a, b := Random(seed), Random(seed)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("seed %d: two specs", seed)
		}
		if _, err := a.Normalized(); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
		if a.Ranks < 1 || a.Ranks > 16 {
			t.Errorf("seed %d: %d ranks", seed, a.Ranks)
		}
		a.Name, a.Seed = "", 0
		k, _ := json.Marshal(a)
		if s, dup := seen[string(k)]; dup {
			t.Errorf("seeds %d and %d give the same spec", s, seed)
		}
		seen[string(k)] = seed
	}
}

func TestDemoTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("writes ~55 MB")
	}
	tr, err := Generate(Demo(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// the grad kernel of layer 0, the fourth the backward calls: a forward
	// entry by its name, in the backward by its phase
	if !tr.Anomaly || tr.Step != 6 || !slices.Equal(tr.Ranks, []int{3, 7}) || !tr.Tie ||
		tr.Stage != "backward" || tr.Phase != "backward" || tr.Kind != "nan" || !tr.Captured ||
		tr.Op != "attn_ext.flash_attention_grad.3.forward" {
		t.Errorf("demo truth %+v", tr)
	}
	c := tr.Carrier
	if c == nil || c.Step != 6 || !strings.HasPrefix(c.Op, "Distributed.all_reduce.") ||
		!slices.Equal(c.FromRanks, []int{3, 7}) || len(c.ToRanks) != 30 {
		t.Errorf("demo carrier %+v", c)
	}
	if !slices.ContainsFunc(tr.Notes, func(n string) bool { return strings.Contains(n, "loss is first non-finite at step 7") }) {
		t.Errorf("demo loss is not first NaN at step 7: %q", tr.Notes)
	}
}

func TestSpecErrors(t *testing.T) {
	mk := func(f func(*Spec)) Spec {
		s := base("x", &Fault{Kind: LogNegative, Step: 1, Ranks: []int{0}})
		f(&s)
		return s
	}
	bad := []Spec{
		mk(func(s *Spec) { s.Ranks = 0 }),
		mk(func(s *Spec) { s.Steps = nil }),
		mk(func(s *Spec) { s.Fault.Ranks = []int{9} }),
		mk(func(s *Spec) { s.Fault.Step = 9 }),
		mk(func(s *Spec) { s.Level = "L0" }),
		mk(func(s *Spec) { s.Format.Indent = -1 }),
		mk(func(s *Spec) { s.Format.RankDir = "proc" }),
		mk(func(s *Spec) { s.Model, s.TP = TensorParallel, 3 }),
		mk(func(s *Spec) { s.Fault = &Fault{Kind: SendRecvCarrier, Step: 1, Ranks: []int{0}} }),
		mk(func(s *Spec) { s.Damage = []Damage{{Step: 7, Rank: 0, TruncateAt: 0.5}} }),
	}
	for i, s := range bad {
		if _, err := Generate(s, t.TempDir()); err == nil {
			t.Errorf("spec %d: no error", i)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(mk(func(*Spec) {}), dir); err == nil {
		t.Error("non-empty directory accepted")
	}
}

func TestRankDirNames(t *testing.T) {
	for _, c := range []struct{ style, want string }{{"proc", "proc"}, {"bare", "rank"}, {"rank", "rank0"}} {
		s := base("dirs", &Fault{Kind: LogNegative, Step: 1, Ranks: []int{0}})
		s.Ranks, s.LossLog, s.Steps, s.Format.RankDir = 1, false, []int{1}, c.style
		dir := t.TempDir()
		if _, err := Generate(s, dir); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(filepath.Join(dir, "step1"))
		if err != nil || len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), c.want) {
			t.Errorf("%s: step1 holds %v (%v)", c.style, ents, err)
		}
		if c.style == "bare" && ents[0].Name() != "rank" {
			t.Errorf("bare rank directory is %s", ents[0].Name())
		}
	}
}
