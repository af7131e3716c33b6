package report

import (
	"strings"
	"unicode/utf8"
)

// textTable lays rows of cells out as aligned text: each column is as wide
// as its widest cell, columns are two spaces apart, every line starts with
// indent, and the last cell of a row is never padded.
type textTable struct {
	indent string
	rows   [][]string
}

func (c *textTable) add(cells ...string) { c.rows = append(c.rows, cells) }

func (c *textTable) lines() []string {
	var widths []int
	for _, r := range c.rows {
		for i, cell := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			if i < len(r)-1 { // a last cell sets no width
				widths[i] = max(widths[i], utf8.RuneCountInString(cell))
			}
		}
	}
	out := make([]string, 0, len(c.rows))
	for _, r := range c.rows {
		var b strings.Builder
		b.WriteString(c.indent)
		for i, cell := range r {
			b.WriteString(cell)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// print writes the lines.
func (c *textTable) print(p *printer) {
	for _, l := range c.lines() {
		p.f("%s\n", l)
	}
}
