package verdict

import (
	"bytes"
	"encoding/json"

	"github.com/nanhunt/nanhunt/internal/fsjson"
)

// A path in a verdict (a warning's file, a link and its target) is the
// bytes of the name on disk, which Linux does not require to be UTF-8. Its
// JSON keeps them: a byte that is not UTF-8 is written as \udc80-\udcff
// (Python's surrogateescape: os.fsencode turns the string json.loads gives
// back into the bytes) and read back as that byte (package fsjson). Paths
// that are UTF-8 are written as encoding/json writes any string.

// Path is a path a verdict names in a field of its own (scanned.path,
// origin.timeline.file): a string written and read byte for byte.
type Path string

// MarshalJSON writes the path byte for byte.
func (p Path) MarshalJSON() ([]byte, error) { return fsjson.String(p).MarshalJSON() }

// UnmarshalJSON reads the path byte for byte.
func (p *Path) UnmarshalJSON(b []byte) error {
	s := fsjson.String(*p)
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	*p = Path(s)
	return nil
}

// warningJSON is a Warning as JSON holds it: its members in its order
// (TestWarningJSONMirrorsWarning holds the two types to each other).
type warningJSON struct {
	File    fsjson.String `json:"file,omitempty"`
	Offset  *int64        `json:"offset,omitempty"`
	Message string        `json:"message"`
}

// MarshalJSON writes the warning, its file byte for byte.
func (w Warning) MarshalJSON() ([]byte, error) {
	return marshalPlain(warningJSON{File: fsjson.String(w.File), Offset: w.Offset, Message: w.Message})
}

// UnmarshalJSON reads a warning, its file byte for byte.
func (w *Warning) UnmarshalJSON(b []byte) error {
	v := warningJSON{File: fsjson.String(w.File), Offset: w.Offset, Message: w.Message}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*w = Warning{File: string(v.File), Offset: v.Offset, Message: v.Message}
	return nil
}

// MarshalJSON writes the link, its path and target byte for byte.
func (l Link) MarshalJSON() ([]byte, error) {
	return marshalPlain(struct {
		Path   fsjson.String `json:"path"`
		Target fsjson.String `json:"target"`
	}{fsjson.String(l.Path), fsjson.String(l.Target)})
}

// UnmarshalJSON reads a link, its path and target byte for byte.
func (l *Link) UnmarshalJSON(b []byte) error {
	v := struct {
		Path   fsjson.String `json:"path"`
		Target fsjson.String `json:"target"`
	}{fsjson.String(l.Path), fsjson.String(l.Target)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	l.Path, l.Target = string(v.Path), string(v.Target)
	return nil
}

// marshalPlain writes v as encoding/json does without HTML escaping: the
// encoder that asked for it escapes HTML over it when it is set to.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
