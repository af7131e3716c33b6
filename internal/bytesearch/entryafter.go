package bytesearch

import "io"

// The windows EntryAfter reads forwards through: each one reads
// afterWin bytes more (plus lastOver, so that a line its end cuts is whole).
const afterWin = 64 << 10

// EntryAfter finds, reading a dump.json written by json.dump(indent=N)
// forwards from after, the first entry whose name satisfies isBackward and
// whose quote lies past after. It reads at most about limit bytes (whole
// windows of 64 KiB), and returns the offset of that quote, or -1 when it
// found none there: -1 says nothing of the bytes past what it read, nor of
// an entry whose name line is longer than the overlap of its windows
// (lastOver). A found offset is exact: every entry it accepts is one that
// LastEntry would accept, so a found offset o means LastEntry's answer is
// at least o.
//
// It serves the question LastEntry answers for a file whose suspects are all
// masks (policy): does a backward entry lie after the last of them? In a
// training step the masks are built in the forward, and the first backward
// entry follows the last of them within a few kilobytes, while the optimizer
// after the last backward entry may be a quarter of the file.
func EntryAfter(ra io.ReaderAt, after, limit, size int64, indent int, isBackward func(name []byte) bool) (int64, error) {
	return entryAfter(ra, after, limit, size, indent, isBackward, afterWin, lastOver)
}

func entryAfter(ra io.ReaderAt, after, limit, size int64, indent int, isBackward func(name []byte) bool, win, over int) (int64, error) {
	line := EntryLine(nil, indent, '"')
	lb := lastEntryBufs.Get().(*lastEntryBuf)
	defer lastEntryBufs.Put(lb)
	if len(lb.data) < win+over {
		lb.data = make([]byte, win+over)
	}
	// a line whose '\n' lies at or past first has its quote past after
	first := max(0, after-int64(len(line))+2)
	for start := first; start < size && start-first < limit; start += int64(win) {
		b := lb.data[:min(size, start+int64(win+over))-start]
		if _, err := ra.ReadAt(b, start); err != nil && err != io.EOF {
			return -1, err
		}
		lb.lines = needleLines(b, min(win, len(b)), lb.lines[:0])
		for i, nl := range lb.lines {
			if i > 0 && lb.lines[i-1] == nl {
				continue
			}
			if name, ok := entryName(b, nl, line); ok && MayBeBackward(name) && isBackward(name) {
				return start + int64(nl+len(line)-1), nil
			}
		}
	}
	return -1, nil
}
