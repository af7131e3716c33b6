package watch

import (
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/dumplayout"
	"github.com/nanhunt/nanhunt/internal/synth"
)

// replayer writes a finished run into a folder step by step, the way
// msprobe does during training: each rank's files appear when the rank
// gets there, dump.json is rewritten whole at each flush (the first
// flushes hold part of the step, cut anywhere), ranks finish out of order,
// and now and then a rank is caught mid-write for longer than the watch's
// settle time.
type replayer struct {
	src, dst string
	rng      *rand.Rand
	gap      time.Duration // between flushes
	torn     time.Duration // how long a torn file sometimes stays

	mu       sync.Mutex
	complete map[int]time.Time // step -> when its last file was written whole
}

func (r *replayer) steps(t *testing.T) []int {
	ents, err := os.ReadDir(r.src)
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, e := range ents {
		if s, ok := dumplayout.Numbered(e.Name(), "step"); ok {
			steps = append(steps, s)
		}
	}
	sort.Ints(steps)
	return steps
}

func (r *replayer) run(t *testing.T, done chan<- struct{}) {
	defer close(done)
	for _, s := range r.steps(t) {
		step := "step" + strconv.Itoa(s)
		ents, err := os.ReadDir(filepath.Join(r.src, step))
		if err != nil {
			t.Error(err)
			return
		}
		order := r.rng.Perm(len(ents))
		for _, i := range order {
			rank := ents[i].Name()
			from, to := filepath.Join(r.src, step, rank), filepath.Join(r.dst, step, rank)
			if err := os.MkdirAll(to, 0o755); err != nil {
				t.Error(err)
				return
			}
			data, err := os.ReadFile(filepath.Join(from, "dump.json"))
			if err != nil {
				t.Error(err)
				return
			}
			// flushes: a part of the file, a larger part, then all of it,
			// with stack.json and construct.json
			for _, frac := range []float64{0.3 * r.rng.Float64(), 0.4 + 0.5*r.rng.Float64(), 1} {
				if frac == 1 {
					for _, side := range []string{"stack.json", "construct.json"} {
						if b, err := os.ReadFile(filepath.Join(from, side)); err == nil {
							os.WriteFile(filepath.Join(to, side), b, 0o644)
						}
					}
					copyTensors(t, from, to)
				}
				n := int(frac * float64(len(data)))
				if err := os.WriteFile(filepath.Join(to, "dump.json"), data[:n], 0o644); err != nil {
					t.Error(err)
					return
				}
				pause := r.gap
				if frac < 1 && r.rng.Intn(4) == 0 {
					pause = r.torn // caught mid-write for a while
				}
				time.Sleep(pause)
			}
		}
		r.mu.Lock()
		r.complete[s] = time.Now()
		r.mu.Unlock()
	}
}

func (r *replayer) completedAt(s int) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.complete[s]
}

func generate(t *testing.T, scenario string) string {
	t.Helper()
	for _, sc := range synth.Scenarios() {
		if sc.Name == scenario {
			dir := filepath.Join(t.TempDir(), "finished")
			if _, err := synth.Generate(sc.Spec, dir); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	t.Fatalf("no scenario %s", scenario)
	return ""
}

// copyTensors copies a rank's dump_tensor_data folder, when it has one.
func copyTensors(t *testing.T, from, to string) {
	files, _ := filepath.Glob(filepath.Join(from, tensorFolder, "*"))
	if len(files) == 0 {
		return
	}
	if err := os.MkdirAll(filepath.Join(to, tensorFolder), 0o755); err != nil {
		t.Error(err)
		return
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			os.WriteFile(filepath.Join(to, tensorFolder, filepath.Base(f)), b, 0o644)
		}
	}
}
