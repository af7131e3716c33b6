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
// backward}" (APIs), "{op}.{forward|backward|parameters_grad}.{N}"
// (modules) or "{prefix}.{api}_{N}_{M}" (the skill's form, M 0 forward and
// 1 backward).
func parseName(name string) nameParts {
	p := nameParts{op: name}
	segs := strings.Split(name, ".")
	n := len(segs)
	if n >= 3 {
		last, prev := segs[n-1], segs[n-2]
		switch {
		case (last == "forward" || last == "backward") && isDigits(prev):
			p.op = strings.Join(segs[:n-2], ".")
		case isDigits(last) && (prev == "forward" || prev == "backward" || prev == "parameters_grad"):
			p.op = strings.Join(segs[:n-2], ".")
			p.backward = isModulePrefix(segs[0]) && (prev == "backward" || prev == "parameters_grad")
		}
	}
	if p.op == name && n >= 2 {
		if api, pass, ok := underscoreCounters(segs[n-1]); ok {
			p.op = strings.Join(segs[:n-1], ".") + "." + api
			p.backward = pass == "1"
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

// underscoreCounters reads "{api}_{N}_{M}" with N digits and M 0 or 1.
func underscoreCounters(seg string) (api, pass string, ok bool) {
	parts := strings.Split(seg, "_")
	k := len(parts)
	if k < 3 || !isDigits(parts[k-2]) || len(parts[k-2]) > 9 || (parts[k-1] != "0" && parts[k-1] != "1") {
		return "", "", false
	}
	api = strings.Join(parts[:k-2], "_")
	if api == "" {
		return "", "", false
	}
	return api, parts[k-1], true
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

// isModulePrefix tells the prefixes of module calls: Module (PyTorch) and
// Cell (MindSpore).
func isModulePrefix(s string) bool { return s == "Module" || s == "Cell" }
