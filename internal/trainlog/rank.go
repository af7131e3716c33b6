package trainlog

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// maxRank bounds the ranks read from names and lines.
const maxRank = 1 << 20

// nameRank matches a rank in a file or folder name: rank3, rank_3, rank-3,
// worker3, proc3, not preceded by a letter or digit and not followed by a
// digit.
var nameRank = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])(?:rank|worker|proc)[-_]?([0-9]{1,7})(?:[^0-9]|$)`)

// rankFromPath returns the rank named by a path: by its file name, else by
// its folder's name, else by torchrun's log layout .../<rank>/stdout.log;
// -1 if none.
func rankFromPath(path string) int {
	base := filepath.Base(path)
	dir := filepath.Base(filepath.Dir(path))
	for _, s := range []string{base, dir} {
		if m := nameRank.FindStringSubmatch(s); m != nil {
			if r, err := strconv.Atoi(m[1]); err == nil && r < maxRank {
				return r
			}
		}
	}
	switch strings.TrimSuffix(base, ".gz") {
	case "stdout.log", "stderr.log", "stdout", "stderr":
		if r, ok := parseCount([]byte(dir)); ok && r < maxRank {
			return r
		}
	}
	return -1
}

// lineRank returns the rank a line names, -1 if none: a launcher prefix
// "[rank3]:" or "[default3]:" at the start of the line, else DeepSpeed's
// "[Rank 3]" anywhere.
func lineRank(line []byte) int {
	s := bytes.TrimLeft(line, " \t")
	if len(s) > 0 && s[0] == '[' {
		for _, p := range []string{"[rank", "[default"} {
			if bytes.HasPrefix(s, []byte(p)) {
				if r, n := leadingRank(s[len(p):]); n > 0 && n < len(s)-len(p) && s[len(p)+n] == ']' {
					return r
				}
			}
		}
	}
	for off := 0; ; {
		i := bytes.Index(line[off:], []byte("[Rank "))
		if i < 0 {
			return -1
		}
		rest := line[off+i+len("[Rank "):]
		if r, n := leadingRank(rest); n > 0 && n < len(rest) && rest[n] == ']' {
			return r
		}
		off += i + 1
	}
}

// leadingRank reads the digits at the start of b as a rank; n is the number
// of digits, 0 if there are none or the number is too large.
func leadingRank(b []byte) (r, n int) {
	for n < len(b) && isDigit(b[n]) {
		r = r*10 + int(b[n]-'0')
		n++
		if r >= maxRank {
			return 0, 0
		}
	}
	return r, n
}
