package cases

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// MsprobeLayout lays a JSON document out the way msprobe writes it
// (Python's json.dump with indent=1; bare NaN and Infinity tokens kept).
func MsprobeLayout(doc []byte) (string, error) {
	n, err := jsonoracle.Decode(doc)
	if err != nil {
		return "", fmt.Errorf("cases: %w", err)
	}
	var b strings.Builder
	writeIndented(&b, n, 0)
	return b.String(), nil
}

func writeIndented(b *strings.Builder, n *jsonoracle.Node, depth int) {
	pad := func(d int) string { return strings.Repeat(" ", d) }
	switch n.Kind {
	case jsonoracle.Array:
		if len(n.Elems) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range n.Elems {
			b.WriteString(pad(depth + 1))
			writeIndented(b, e, depth+1)
			b.WriteString(separator(i, len(n.Elems)))
		}
		b.WriteString(pad(depth) + "]")
	case jsonoracle.Object:
		if len(n.Members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range n.Members {
			b.WriteString(pad(depth+1) + quote(m.Name) + ": ")
			writeIndented(b, m.Value, depth+1)
			b.WriteString(separator(i, len(n.Members)))
		}
		b.WriteString(pad(depth) + "}")
	default:
		b.WriteString(scalar(n))
	}
}

func separator(i, n int) string {
	if i < n-1 {
		return ",\n"
	}
	return "\n"
}

func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// scalar is a leaf as JSON text.
func scalar(n *jsonoracle.Node) string {
	switch n.Kind {
	case jsonoracle.Bool:
		return fmt.Sprint(n.Bool)
	case jsonoracle.Number:
		return n.Literal
	case jsonoracle.String:
		return quote(n.Literal)
	case jsonoracle.NaN:
		return "NaN"
	case jsonoracle.PosInf:
		return "Infinity"
	case jsonoracle.NegInf:
		return "-Infinity"
	}
	return "null"
}

// compactLayout writes a document on few lines. A dump (an object with a
// "data" object) is its other members on the first line and one entry of
// "data" a line; another object is one member a line; anything else one
// line.
func compactLayout(doc []byte) (string, error) {
	n, err := jsonoracle.Decode(doc)
	if err != nil {
		return "", fmt.Errorf("cases: %w", err)
	}
	if n.Kind != jsonoracle.Object || len(n.Members) == 0 {
		return oneLine(n), nil
	}
	isEntries := func(m jsonoracle.Member) bool {
		return m.Name == "data" && m.Value.Kind == jsonoracle.Object && len(m.Value.Members) > 0
	}
	if slices.ContainsFunc(n.Members, isEntries) {
		var b strings.Builder
		b.WriteString("{")
		for i, m := range n.Members {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(m.Name) + ": ")
			if !isEntries(m) {
				b.WriteString(oneLine(m.Value))
				continue
			}
			b.WriteString("{\n")
			for j, e := range m.Value.Members {
				b.WriteString(quote(e.Name) + ": " + oneLine(e.Value) + separator(j, len(m.Value.Members)))
			}
			b.WriteString("}")
		}
		b.WriteString("}")
		return b.String(), nil
	}
	var b strings.Builder
	b.WriteString("{\n")
	for i, m := range n.Members {
		b.WriteString(quote(m.Name) + ": " + oneLine(m.Value) + separator(i, len(n.Members)))
	}
	b.WriteString("}")
	return b.String(), nil
}

// oneLine is a value on one line, with Python's ", " and ": ".
func oneLine(n *jsonoracle.Node) string {
	switch n.Kind {
	case jsonoracle.Array:
		parts := make([]string, len(n.Elems))
		for i, e := range n.Elems {
			parts[i] = oneLine(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case jsonoracle.Object:
		parts := make([]string, len(n.Members))
		for i, m := range n.Members {
			parts[i] = quote(m.Name) + ": " + oneLine(m.Value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return scalar(n)
}
