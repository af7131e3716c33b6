package dump

import (
	"bytes"
	"io"
)

// LastEntry finds, reading a dump.json written by json.dump(indent=N) from
// its end backwards, the last entry whose name satisfies match, and returns
// the offset of the quote before its name, or -1 when there is none. It
// reads only the tail after that entry, a window at a time.
func LastEntry(ra io.ReaderAt, size int64, indent int, match func(name string) bool) (int64, error) {
	line := append(append([]byte{'\n'}, bytes.Repeat([]byte{' '}, 2*indent)...), '"')
	const win, over = 256 << 10, 4 << 10
	buf := make([]byte, win+over)
	for end := size; end > 0; {
		start := max(0, end-win)
		b := buf[:min(size, end+over)-start]
		if _, err := ra.ReadAt(b, start); err != nil && err != io.EOF {
			return -1, err
		}
		// lines whose '\n' lies before end, from the last one back
		for limit := int(end - start); ; {
			i := bytes.LastIndex(b[:min(len(b), limit+len(line)-1)], line)
			if i < 0 {
				break
			}
			q := i + len(line) - 1
			if e := bytes.IndexByte(b[q+1:], '"'); e >= 0 && match(string(b[q+1:q+1+e])) {
				return start + int64(q), nil
			}
			limit = i
		}
		end = start
	}
	return -1, nil
}
