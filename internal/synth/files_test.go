package synth

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkStackFile checks a rank's stack.json: present unless the damage
// removed it, well formed in its version, a stack for every forward entry
// (unless the dump is cut) and none for a backward entry.
func checkStackFile(t *testing.T, s *Spec, rd string, dmg Damage, forward map[string]bool) {
	sb, err := os.ReadFile(filepath.Join(rd, "stack.json"))
	if dmg.DropStack {
		if err == nil {
			t.Errorf("%s: stack.json should be missing", rd)
		}
	} else if err != nil {
		t.Errorf("%s: %v", rd, err)
	} else {
		st, err := parseFast(sb)
		if err == nil && !json.Valid(lenient(sb)) {
			t.Errorf("%s: encoding/json rejects stack.json", rd)
		}
		if err != nil {
			t.Errorf("%s: stack.json: %v", rd, err)
		} else {
			stacked := map[string]bool{}
			if s.Format.StackVersion == 1 {
				for i, k := range st.keys {
					if st.vals[i].kind != 'a' || len(st.vals[i].vals) == 0 {
						t.Errorf("%s: stack v1 %s", rd, k)
					}
					stacked[k] = true
				}
			} else {
				for i, k := range st.keys {
					if k != fmt.Sprint(i) {
						t.Errorf("%s: stack v2 key %q at %d", rd, k, i)
					}
					v := st.vals[i]
					if v.kind != 'a' || len(v.vals) != 2 {
						t.Errorf("%s: stack v2 group %s", rd, k)
						continue
					}
					for _, n := range v.vals[0].vals {
						stacked[n.s] = true
					}
					for _, l := range v.vals[1].vals {
						if !strings.HasPrefix(l.s, "File ") || !strings.Contains(l.s, ", \n ") {
							t.Errorf("%s: stack line %q", rd, l.s)
						}
					}
				}
			}
			for name := range forward {
				if !stacked[name] && dmg.TruncateAt == 0 {
					t.Errorf("%s: no stack for %s", rd, name)
				}
			}
			for name := range stacked {
				if strings.HasSuffix(name, ".backward") {
					t.Errorf("%s: stack for backward entry %s", rd, name)
				}
			}
		}
	}
}

// checkConstructFile checks a rank's construct.json: present unless the
// damage removed it, {} at level L1, and at level mix a parent for every
// entry that is a node of the file.
func checkConstructFile(t *testing.T, s *Spec, rd string, dmg Damage, d *parsedDump) {
	cb, err := os.ReadFile(filepath.Join(rd, "construct.json"))
	if dmg.DropConstruct {
		if err == nil {
			t.Errorf("%s: construct.json should be missing", rd)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v", rd, err)
		return
	}
	c, err := parseFast(cb)
	if err == nil && !json.Valid(lenient(cb)) {
		t.Errorf("%s: encoding/json rejects construct.json", rd)
	}
	if err != nil {
		t.Errorf("%s: construct.json: %v", rd, err)
		return
	}
	if s.Level == "L1" {
		if len(c.keys) != 0 || string(cb) != "{}" {
			t.Errorf("%s: L1 construct.json is not {}", rd)
		}
		return
	}
	known := map[string]bool{"optimizer": true, "clip_grad": true}
	for _, k := range c.keys {
		known[k] = true
	}
	for i, k := range c.keys {
		p := c.vals[i]
		if p.kind == 's' && !known[p.s] {
			t.Errorf("%s: construct parent %q of %s is not a node", rd, p.s, k)
		}
		if p.kind != 's' && p.kind != 'z' {
			t.Errorf("%s: construct value of %s", rd, k)
		}
	}
	for _, name := range d.names {
		if !strings.Contains(name, ".parameters_grad.") && !known[name] {
			t.Errorf("%s: %s missing from construct.json", rd, name)
		}
	}
}
