package climb

// Window is how many of the last points a judge is shown: enough for the
// rule's last three and a history to compare them with.
const Window = 16

// MaxAfter bounds the points kept after a series fired; later ones are
// only counted.
const MaxAfter = 64

// Point is one value of a series at one step.
type Point struct {
	Step  int
	Value float64
}

// Judge tells whether a series, its last points oldest first (at most
// Window), warns at its last point.
type Judge func(window []Point) bool

// Track follows one series. The zero value is an empty series.
type Track struct {
	win [Window]Point
	n   int // points in win (at most Window)
	// Count is every point added.
	Count int
	// Fired is the window at the first point the judge accepted, oldest
	// first; nil while it has not fired.
	Fired []Point
	// After are the points added after Fired, at most MaxAfter; AfterMore
	// counts the ones past it.
	After     []Point
	AfterMore int
	// Stopped reports that the series met a value that is not a number it
	// can follow (NaN, Inf): nothing is added after it. StopStep is its
	// step.
	Stopped  bool
	StopStep int
}

// Add appends a point, judges the series at it while it has not fired,
// and keeps the point after it fired. A point at a step not after the
// last one is ignored (the series is read in step order).
func (t *Track) Add(p Point, judge Judge) {
	if t.Stopped || (t.n > 0 && p.Step <= t.win[t.n-1].Step) {
		return
	}
	if t.n == Window {
		copy(t.win[:], t.win[1:])
		t.n--
	}
	t.win[t.n] = p
	t.n++
	t.Count++
	switch {
	case t.Fired != nil && len(t.After) < MaxAfter:
		t.After = append(t.After, p)
	case t.Fired != nil:
		t.AfterMore++
	case judge != nil && judge(t.win[:t.n]):
		t.Fired = append([]Point(nil), t.win[:t.n]...)
	}
}

// Stop ends the series at step: the value there is not one it can follow.
func (t *Track) Stop(step int) {
	if !t.Stopped {
		t.Stopped, t.StopStep = true, step
	}
}

// Last is the last point added; false when there is none.
func (t *Track) Last() (Point, bool) {
	if t.n == 0 {
		return Point{}, false
	}
	return t.win[t.n-1], true
}

// Window returns the last points added, oldest first.
func (t *Track) Window() []Point { return append([]Point(nil), t.win[:t.n]...) }

// Shift adds d to every step kept (a log's iterations become steps once
// its offset is known).
func (t *Track) Shift(d int) {
	for i := range t.win[:t.n] {
		t.win[i].Step += d
	}
	for i := range t.Fired {
		t.Fired[i].Step += d
	}
	for i := range t.After {
		t.After[i].Step += d
	}
	if t.Stopped {
		t.StopStep += d
	}
}

// Series is a followed series with what it is: the source's names for it.
type Series struct {
	// Rank is the rank that printed or recorded it, -1 if unknown.
	Rank int
	// Op is the module (monitor) or the metric (log); Tensor the
	// monitor's file kind ("actv", "grad_reduced", …), "" for the log;
	// Stat "max", "min", "grad_norm" or "loss_scale".
	Op, Tensor, Stat string
	// Dtype is the dtype the monitor recorded, "" when it recorded none
	// (and for the log).
	Dtype string
	Track
}
