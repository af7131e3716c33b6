package verdict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Parse reads a verdict saved as JSON (nanhunt trace --format json) and
// checks what the commands that read it rely on: the schema, and an origin
// with its step, ranks and op whenever the verdict says there is an anomaly
// in the dump. A hand-edited or truncated file is an error naming what is
// wrong, never a verdict with holes.
func Parse(data []byte) (*Verdict, error) {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a JSON verdict: %w", err)
	}
	if !strings.HasPrefix(head.Schema, "nanhunt/verdict/") {
		return nil, fmt.Errorf("not a nanhunt verdict (schema %q; write one with nanhunt trace --format json)", head.Schema)
	}
	if head.Schema != Schema {
		return nil, fmt.Errorf("schema %q, this nanhunt reads %q", head.Schema, Schema)
	}
	var v Verdict
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&v); err != nil {
		return nil, err
	}
	if err := v.Check(); err != nil {
		return nil, err
	}
	return &v, nil
}

// Check reports the first hole in a verdict that nanhunt itself never
// writes.
func (v *Verdict) Check() error {
	o := v.Origin
	switch {
	case o == nil && v.Anomaly && v.Evidence == nil:
		return fmt.Errorf("anomaly is true but there is no origin")
	case o == nil:
		return nil
	case len(o.Ranks) == 0:
		return fmt.Errorf("origin.ranks is empty")
	case o.Op == "":
		return fmt.Errorf("origin.op is empty")
	case o.Step < 0:
		return fmt.Errorf("origin.step is %d", o.Step)
	}
	for _, r := range o.Ranks {
		if r < 0 {
			return fmt.Errorf("origin.ranks holds %d", r)
		}
	}
	if c := v.Carrier; c != nil && c.Op == "" {
		return fmt.Errorf("carrier.op is empty")
	}
	return nil
}

// UnmarshalJSON reads the monitor evidence with its findings as the bytes
// they were written as (json.RawMessage), not as a map: written again, a
// saved verdict gives the bytes the live one gave, members in their order.
func (m *MonitorEvidence) UnmarshalJSON(data []byte) error {
	type plain MonitorEvidence // without this method
	var p struct {
		plain
		Findings json.RawMessage `json:"findings,omitempty"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*m = MonitorEvidence(p.plain)
	m.Findings = nil
	if len(p.Findings) > 0 && string(p.Findings) != "null" {
		m.Findings = p.Findings
	}
	return nil
}
