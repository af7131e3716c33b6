package cases_test

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/verdict"
)

// fastCheck is one line of a case's "fast" section: what only the fast
// path's verdict says. Texts are matched as substrings.
//
//	error TEXT                the analysis refuses the dump with this error
//	suppressed                some call is listed under suppressed
//	suppressed OP VALUES      this op is, for these values
//	interval AFTER BEFORE     the origin's interval runs from AFTER to BEFORE
//	role RANK TEXT            the candidate row of RANK has this role
//	reason TEXT               some reason of the origin's confidence says it
//	no reason TEXT            no reason says it
//	warning TEXT              some warning says it
//	explain KIND OP           an explanation of this kind is about OP ("-": about the run)
//	explained TEXT            some explanation's text says it
//	next TEXT                 some next step says it
func fastCheck(line string, v *verdict.Verdict, err error) error {
	word, arg, _ := strings.Cut(line, " ")
	if word == "no" {
		word, arg, _ = strings.Cut(arg, " ")
		word = "no " + word
	}
	if word == "error" {
		if err == nil || !strings.Contains(err.Error(), arg) {
			return fmt.Errorf("want an error saying %q, got %v", arg, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("the analysis failed: %w", err)
	}
	var ok bool
	switch word {
	case "suppressed":
		op, values, _ := strings.Cut(arg, " ")
		for _, s := range v.Suppressed {
			ok = ok || arg == "" || (s.Op == op && s.Values == values)
		}
	case "interval":
		after, before, _ := strings.Cut(arg, " ")
		if o := v.Origin; o != nil && o.Interval != nil && o.Interval.After != nil {
			ok = o.Interval.After.Op == after && o.Interval.Before.Op == before
		}
	case "role":
		rank, text, _ := strings.Cut(arg, " ")
		r, _ := strconv.Atoi(rank)
		for _, c := range v.Candidates {
			ok = ok || (c.Rank == r && strings.Contains(c.Role, text))
		}
	case "reason", "no reason":
		if v.Origin != nil {
			for _, r := range v.Origin.Reasons {
				ok = ok || strings.Contains(r, arg)
			}
		}
		ok = ok == (word == "reason")
	case "warning":
		for _, w := range v.Warnings {
			ok = ok || strings.Contains(w.Message, arg)
		}
	case "explain":
		kind, op, _ := strings.Cut(arg, " ")
		if op == "-" {
			op = ""
		}
		for _, e := range v.Explanations {
			ok = ok || (e.Kind == kind && e.Op == op)
		}
	case "explained":
		for _, e := range v.Explanations {
			ok = ok || strings.Contains(e.Text, arg)
		}
	case "next":
		for _, n := range v.NextSteps {
			ok = ok || strings.Contains(n, arg)
		}
	default:
		return fmt.Errorf("unknown check %q", line)
	}
	if !ok {
		return fmt.Errorf("%q does not hold", line)
	}
	return nil
}

// fastError is the error a case's "fast" section expects, "" for none.
func fastError(checks []string) string {
	for _, c := range checks {
		if text, ok := strings.CutPrefix(c, "error "); ok {
			return text
		}
	}
	return ""
}

// explainCheck reports whether a check reads the explanations, which no
// limit caps: it holds under tiny limits too.
func explainCheck(check string) bool {
	return strings.HasPrefix(check, "explain ") || strings.HasPrefix(check, "explained ")
}
