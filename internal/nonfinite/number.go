package nonfinite

import (
	"encoding/json"
	"math"
	"strconv"
)

// Number is a statistic that may be non-finite or absent. In JSON it is a
// number when finite, the string "nan", "inf" or "-inf" otherwise, and
// null when absent.
type Number struct {
	Value float64
	Valid bool
}

// MarshalJSON writes the number, or its non-finite spelling.
func (n Number) MarshalJSON() ([]byte, error) {
	switch {
	case !n.Valid:
		return []byte("null"), nil
	case math.IsNaN(n.Value):
		return []byte(`"nan"`), nil
	case math.IsInf(n.Value, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(n.Value, -1):
		return []byte(`"-inf"`), nil
	}
	return strconv.AppendFloat(nil, n.Value, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes, and any spelling Parse reads.
func (n *Number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Number{}
		return nil
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		if c, ok := Parse(b[1 : len(b)-1]); ok {
			*n = Number{c.Float(), true}
			return nil
		}
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Number{v, true}
	return nil
}

// String writes the number compactly: six significant digits, "NaN",
// "+Inf", "-Inf", or "-" when absent.
func (n Number) String() string {
	switch {
	case !n.Valid:
		return "-"
	case math.IsNaN(n.Value):
		return "NaN"
	case math.IsInf(n.Value, 1):
		return "+Inf"
	case math.IsInf(n.Value, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(n.Value, 'g', 6, 64)
}
