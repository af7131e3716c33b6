package jsonlex_test

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// Find the non-finite statistics of a dump and skip what is not needed.
func Example() {
	const dump = `{
 "task": "statistics",
 "data": {
  "Torch.log.0.forward": {
   "input_args": [{"type": "torch.Tensor", "Max": 1.98, "Min": -0.75}],
   "output": [{"type": "torch.Tensor", "Max": NaN, "Min": -Infinity}]
  }
 }
}`
	l := jsonlex.New(strings.NewReader(dump), jsonlex.Options{})
	var name string
	for {
		tok, err := l.Next()
		if err != nil {
			fmt.Println(err)
			return
		}
		switch {
		case tok.Kind == jsonlex.EOF:
			return
		case tok.Kind == jsonlex.Name && l.Depth() == 1 && string(tok.Bytes) == "task":
			if err := l.SkipValue(); err != nil {
				fmt.Println(err)
				return
			}
		case tok.Kind == jsonlex.Name:
			name = string(tok.Bytes)
		case tok.Kind == jsonlex.NaN || tok.Kind == jsonlex.PosInf || tok.Kind == jsonlex.NegInf:
			fmt.Printf("%s is %v at offset %d\n", name, tok.Kind, tok.Offset)
		}
	}
	// Output:
	// Max is NaN at offset 181
	// Min is NegInf at offset 193
}

// Errors carry the byte offset of the problem.
func ExampleSyntaxError() {
	l := jsonlex.New(strings.NewReader(`{"Max": NaN, "Min": -Inf}`), jsonlex.Options{})
	for {
		_, err := l.Next()
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// offset 24: invalid character '}' in literal -Infinity
}
