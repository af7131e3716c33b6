package watch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/internal/dumplayout"
)

// The members of a state file.
const (
	statePath  = "path"
	stateNext  = "next_step"
	statePrev  = "last_clean_step"
	stateAlarm = "alarm_step"
)

// maxNextStep is the largest next_step: the step after the largest step
// folder number.
const maxNextStep = dumplayout.MaxFolderNumber + 1

// ParseState reads the bytes of a state file, which is untrusted input,
// strictly: UTF-8 text holding one JSON object whose members are "path" (a
// string, not empty), "next_step" (an integer from 0 to one above the
// largest step folder number), and optionally "last_clean_step" (null, or
// an integer from 0 to below next_step) and "alarm_step" (null, or an
// integer from 0), each once and spelled exactly so. Anything else — an
// unknown member, a value of another kind, a fraction, data after the
// object — is refused with what is wrong. Its time and memory are bounded
// by the input's size: a value of the wrong kind is refused at its first
// token, before anything nested in it is read.
func ParseState(b []byte) (State, error) {
	if !utf8.Valid(b) {
		return State{}, errors.New("not UTF-8 text")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := token(dec); err != nil {
		return State{}, err
	} else if tok != json.Delim('{') {
		return State{}, fmt.Errorf("%s, not a JSON object", tokenKind(tok))
	}
	st, seen, err := stateMembers(dec)
	if err != nil {
		return State{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return State{}, errors.New("data after the object")
	}
	return st, checkState(st, seen)
}

// stateMembers reads the members of the state object up to its closing
// brace, and says which it met.
func stateMembers(dec *json.Decoder) (State, map[string]bool, error) {
	var st State
	seen := map[string]bool{}
	for dec.More() {
		tok, err := token(dec)
		if err != nil {
			return st, nil, err
		}
		name, _ := tok.(string)
		if seen[name] {
			return st, nil, fmt.Errorf("%q twice", name)
		}
		seen[name] = true
		switch name {
		case statePath:
			st.Path, err = stringValue(dec, name)
		case stateNext:
			st.Next, err = intValue(dec, name)
		case statePrev:
			st.Prev, err = nullableInt(dec, name)
		case stateAlarm:
			st.Alarm, err = nullableInt(dec, name)
		default:
			err = fmt.Errorf("unknown member %q", name)
		}
		if err != nil {
			return st, nil, err
		}
	}
	if _, err := token(dec); err != nil { // the closing brace
		return st, nil, err
	}
	return st, seen, nil
}

// checkState refuses a state that lacks a member it needs or whose steps
// cannot be.
func checkState(st State, seen map[string]bool) error {
	switch {
	case !seen[statePath] || st.Path == "":
		return fmt.Errorf("no %q", statePath)
	case !seen[stateNext]:
		return fmt.Errorf("no %q", stateNext)
	case st.Next > maxNextStep:
		return fmt.Errorf("%q %d: above %d", stateNext, st.Next, maxNextStep)
	case st.Prev != nil && *st.Prev >= st.Next:
		return fmt.Errorf("%q %d is not below %q %d", statePrev, *st.Prev, stateNext, st.Next)
	}
	return nil
}

// stringValue reads a string member's value.
func stringValue(dec *json.Decoder, name string) (string, error) {
	tok, err := token(dec)
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("%q: %s, not a string", name, tokenKind(tok))
	}
	return s, nil
}

// intValue reads a member's value that is a step: an integer, 0 or more.
func intValue(dec *json.Decoder, name string) (int, error) {
	tok, err := token(dec)
	if err != nil {
		return 0, err
	}
	return stepOf(tok, name)
}

// nullableInt reads a member's value that is a step or null.
func nullableInt(dec *json.Decoder, name string) (*int, error) {
	tok, err := token(dec)
	if err != nil || tok == nil {
		return nil, err
	}
	n, err := stepOf(tok, name)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// stepOf is the step a token holds: an integer literal (no fraction, no
// exponent) from 0 to the largest int.
func stepOf(tok json.Token, name string) (int, error) {
	num, ok := tok.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%q: %s, not a step number", name, tokenKind(tok))
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt {
		return 0, fmt.Errorf("%q: %.40s is not a step number (an integer, 0 or more)", name, num)
	}
	return int(n), nil
}

// token is the next token; the input's end before the object's is an
// error.
func token(dec *json.Decoder) (json.Token, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return tok, err
}

// tokenKind names what a token starts, for the messages.
func tokenKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return "an object"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a value"
}
