package dump_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/nanhunt/nanhunt/dump"
)

// writeRank writes a one-rank dump of step 0 under a new folder and
// returns the folder: what msprobe leaves in dump_path.
func writeRank() string {
	root, err := os.MkdirTemp("", "dump-example")
	if err != nil {
		log.Fatal(err)
	}
	rank := filepath.Join(root, "step0", "rank0")
	files := map[string]string{
		"dump.json": `{"task": "statistics", "level": "mix", "framework": "pytorch", "dump_data_dir": null, "data": {
  "Torch.sqrt.0.forward": {
   "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 2.0, "Min": -1.0, "Mean": 0.5, "Norm": 2.5, "requires_grad": false}],
   "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.41, "Min": NaN, "Mean": NaN, "Norm": NaN, "requires_grad": false}]
  }
 }
}`,
		"stack.json":     `{"Torch.sqrt.0.forward": ["File /job/model.py, line 57, in forward, \n return torch.sqrt(x)"]}`,
		"construct.json": `{"Torch.sqrt.0.forward": "Module.encoder.Encoder.forward.0", "Module.encoder.Encoder.forward.0": null}`,
	}
	if err := os.MkdirAll(rank, 0o755); err != nil {
		log.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(rank, name), []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	return root
}

// A program outside nanhunt finds the rank folders of a dump and streams
// the entries of each dump.json with their tensors' statistics.
func Example() {
	root := writeRank()
	defer os.RemoveAll(root)

	layout, err := dump.Discover(root)
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range layout.Dirs {
		f, err := os.Open(d.Dump)
		if err != nil {
			log.Fatal(err)
		}
		r := dump.NewReader(f, dump.ReaderOptions{})
		for r.Next() {
			e := r.Entry()
			for _, t := range e.Tensors {
				if t.Min.Class != 0 {
					name := dump.ParseName(e.Name)
					fmt.Printf("step %d rank %d: %s (%s) %s %d has Min %v\n", d.Step, d.Rank, name.Op(), name.Dir, t.Field, t.Arg, t.Min.Class)
				}
			}
		}
		f.Close()
		if err := r.Err(); err != nil {
			log.Fatal(err) // damage is a *dump.FormatError naming its offset
		}
		fmt.Println("task:", r.Header().Task)

	}
	// Output:
	// step 0 rank 0: Torch.sqrt (forward) output 0 has Min nan
	// task: statistics
}
