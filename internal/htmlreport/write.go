package htmlreport

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/nanhunt/nanhunt/internal/intranges"
	"github.com/nanhunt/nanhunt/verdict"
)

// Options shape the page.
type Options struct {
	// DumpPath is the dump the verdict was made from (a dump_path, a step
	// or rank folder, or a dump.json). When set, the page reads the origin
	// rank's dump.json around the root op for its timeline; when empty, the
	// timeline is the verdict's own record of the root op.
	DumpPath string
	// Title is the page title (default "nanhunt report").
	Title string
}

var (
	//go:embed assets/page.html.tmpl
	pageHTML string
	//go:embed assets/page.css
	pageCSS string
	//go:embed assets/page.js
	pageJS string
	//go:embed assets/echarts.min.js
	echartsJS string
)

// pageTemplate is parsed on first use: every nanhunt command would pay
// for it at start otherwise.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"ranges": func(r []int) string { return intranges.Format(r) },
		"shape": func(s []int) string {
			parts := make([]string, len(s))
			for i, d := range s {
				parts[i] = fmt.Sprint(d)
			}
			return "[" + strings.Join(parts, ",") + "]"
		},
		"dtype":     func(s string) string { return strings.TrimPrefix(s, "torch.") },
		"holds":     holdsClass,
		"kind":      kindName,
		"breakable": breakable,
		"side":      func(t verdict.TensorStat, out bool) tensorRow { return tensorRow{T: t, Out: out} },
	}).Parse(pageHTML))
})

// tensorRow is a tensor of a call, and whether it is an output.
type tensorRow struct {
	T   verdict.TensorStat
	Out bool
}

// breakable lets a long entry name wrap after its dots.
func breakable(op string) template.HTML {
	parts := strings.Split(op, ".")
	for i, p := range parts {
		parts[i] = template.HTMLEscapeString(p)
	}
	return template.HTML(strings.Join(parts, ".<wbr>"))
}

// holdsClass is the CSS class of what a tensor or call holds.
func holdsClass(h string) string {
	switch {
	case h == "" || h == "unknown":
		return "h-unknown"
	case h == "finite":
		return "h-finite"
	case strings.Contains(h, "nan"):
		return "h-nan"
	case strings.Contains(h, "inf"):
		return "h-inf"
	}
	return "h-unknown"
}

// Write writes the verdict as one self-contained HTML page.
func Write(w io.Writer, v *verdict.Verdict, opt Options) error {
	if v == nil {
		return errors.New("html report: no verdict")
	}
	p, err := newPage(v, opt)
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := pageTemplate().Execute(bw, p); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}
