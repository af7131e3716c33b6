package dump

import (
	"errors"
	"strings"
	"testing"
)

// "data": null reads as an empty dump; a "data" member after it is a
// second one, damage at its offset.
func TestReaderDataAfterNullData(t *testing.T) {
	doc := `{"task": "statistics", "data": null, "data": {"Torch.x.0.forward": {"output": []}}}`
	rd := NewReader(strings.NewReader(doc), ReaderOptions{})
	n := 0
	for rd.Next() {
		n++
	}
	var fe *FormatError
	if n != 0 || !errors.As(rd.Err(), &fe) || fe.Offset != int64(strings.LastIndex(doc, `"data"`)) || !strings.Contains(fe.Error(), "second \"data\"") {
		t.Errorf("%d entries, err %v", n, rd.Err())
	}
}
