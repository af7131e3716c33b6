package cases

import (
	"bytes"
	"strings"
)

// archive is a txtar archive: a comment, then named files.
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct {
	name string
	data string
}

// parseArchive reads a txtar archive: a line "-- NAME --" starts a file,
// which runs to the next such line or the end.
func parseArchive(data []byte) archive {
	var a archive
	var cur *archiveFile
	var text strings.Builder
	flush := func() {
		if cur == nil {
			a.comment = text.String()
		} else {
			cur.data = text.String()
			a.files = append(a.files, *cur)
		}
		text.Reset()
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if name, ok := marker(line); ok {
			flush()
			cur = &archiveFile{name: name}
			continue
		}
		text.Write(line)
	}
	flush()
	return a
}

// marker reads a line "-- NAME --".
func marker(line []byte) (string, bool) {
	s := strings.TrimRight(string(line), "\r\n")
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	return strings.TrimSpace(s[3 : len(s)-3]), true
}

// format writes the archive; every file ends with a newline.
func (a archive) format() []byte {
	var b bytes.Buffer
	b.WriteString(withNewline(a.comment))
	for _, f := range a.files {
		b.WriteString("-- " + f.name + " --\n")
		b.WriteString(withNewline(f.data))
	}
	return b.Bytes()
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
