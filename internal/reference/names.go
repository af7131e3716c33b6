package reference

import "strings"

// nameParts is what an entry name says.
type nameParts struct {
	op         string // the name without counter and direction
	backward   bool   // a backward entry (phase rule 1)
	collective bool
	api        string // collectives: the api, without an npu_ prefix
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseName splits an entry name from the right: "{op}.{N}.{forward|
// backward}" (APIs) or "{op}.{forward|backward|parameters_grad}.{N}"
// (modules).
func parseName(name string) nameParts {
	p := nameParts{op: name}
	segs := strings.Split(name, ".")
	if n := len(segs); n >= 3 {
		last, prev := segs[n-1], segs[n-2]
		switch {
		case (last == "forward" || last == "backward") && isDigits(prev):
			p.op = strings.Join(segs[:n-2], ".")
		case isDigits(last) && (prev == "forward" || prev == "backward" || prev == "parameters_grad"):
			p.op = strings.Join(segs[:n-2], ".")
			p.backward = segs[0] == "Module" && (prev == "backward" || prev == "parameters_grad")
		}
	}
	if strings.HasSuffix(name, ".backward") {
		p.backward = true
	}
	for _, prefix := range []string{"Distributed.", "MintDistributed."} {
		if strings.HasPrefix(name, prefix) {
			p.collective = true
			p.api = strings.TrimPrefix(strings.TrimPrefix(p.op, prefix), "npu_")
		}
	}
	return p
}

// glob matches s against a pattern whose only wildcard is '*' (any run of
// characters, dots included).
func glob(pattern, s string) bool {
	star := strings.Index(pattern, "*")
	if star < 0 {
		return pattern == s
	}
	if !strings.HasPrefix(s, pattern[:star]) {
		return false
	}
	rest := pattern[star+1:]
	s = s[star:]
	for i := 0; i <= len(s); i++ {
		if glob(rest, s[i:]) {
			return true
		}
	}
	return false
}
