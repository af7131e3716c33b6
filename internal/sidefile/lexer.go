package sidefile

import (
	"io"
	"sync"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// sideLexers are the lexers of stack.json and construct.json, reused: a
// rank's side files are read for a few calls each, and a new 1 MiB window
// for each would cost more than reading them.
var sideLexers = sync.Pool{New: func() any { return jsonlex.New(nil, jsonlex.Options{MaxDepth: 64}) }}

func sideLexer(r io.Reader) *jsonlex.Lexer {
	lx := sideLexers.Get().(*jsonlex.Lexer)
	lx.Reset(r)
	return lx
}
