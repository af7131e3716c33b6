package trace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
)

// The nan-overflow-detection skill documents a dump.json and a stack.json
// that msprobe does not write. They are read all the same (package dump
// says how), and each file written so gets one warning saying what real
// msprobe writes instead.

// skillFormNote is the warning of a dump.json with entry names of the form
// "{api}_{N}_{M}" (underscored, the first such entry) or lists written as
// objects keyed by position (keyed, the first such entry); "" when it has
// neither.
func skillFormNote(underscored, keyed string) string {
	var found, real []string
	if underscored != "" {
		n := dump.ParseName(underscored)
		found = append(found, fmt.Sprintf("names like %q, read as %s with _N_0 forward and _N_1 backward", underscored, dottedName(n)))
		real = append(real, strconv.Quote(dottedName(n)))
	}
	if keyed != "" {
		found = append(found, fmt.Sprintf("lists as objects keyed by position (\"output\": {\"0\": {...}}), e.g. in %s", keyed))
		real = append(real, "lists")
	}
	if len(found) == 0 {
		return ""
	}
	return "written in the format the nan-overflow-detection skill documents (" + strings.Join(found, "; ") +
		"); real msprobe writes " + strings.Join(real, " and ") + ": read all the same"
}

// stackFormNote is the warning of a stack.json with calls written as one
// frame [function, file, line]; "" when it has none.
func stackFormNote(triples int) string {
	if triples == 0 {
		return ""
	}
	return fmt.Sprintf("written in the format the nan-overflow-detection skill documents (%d calls as one frame [function, file, line]); "+
		"real msprobe writes each call's stack as lines of text, innermost first ({\"0\": [[names], [lines]]} since 2025-05): read all the same, one frame per call", triples)
}

// dottedName is how msprobe writes the name of an API call:
// "Distributed.all_reduce.0.forward".
func dottedName(n dump.Name) string {
	return n.Op() + "." + strconv.Itoa(n.Call) + "." + n.Dir.String()
}
