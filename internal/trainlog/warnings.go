package trainlog

import "fmt"

// maxWarningsPerFile bounds the warnings kept for one file; the rest are
// counted in one last warning.
const maxWarningsPerFile = 20

// fileWarnings collects the warnings of one file.
type fileWarnings struct {
	path  string
	list  []Warning
	extra int
	once  map[string]bool
}

func (w *fileWarnings) add(line int, format string, args ...any) {
	if len(w.list) >= maxWarningsPerFile {
		w.extra++
		return
	}
	w.list = append(w.list, Warning{File: w.path, Line: line, Message: fmt.Sprintf(format, args...)})
}

// addOnce adds a warning the first time its message is seen in the file.
func (w *fileWarnings) addOnce(line int, msg string) {
	if w.once == nil {
		w.once = map[string]bool{}
	}
	if w.once[msg] {
		return
	}
	w.once[msg] = true
	w.add(line, "%s", msg)
}

// done returns the warnings, with a last one counting those left out.
func (w *fileWarnings) done() []Warning {
	if w.extra > 0 {
		w.list = append(w.list, Warning{File: w.path, Message: fmt.Sprintf("%d more warnings not shown", w.extra)})
	}
	return w.list
}
