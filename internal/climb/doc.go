// Package climb follows one series of values read step after step (a
// monitored module's max, a training log's grad norm or loss scale) while
// a reader streams its input, and keeps only what a warning before the NaN
// needs: the last Window points, the window at the first point a judge
// accepted (the warning, with the step it was due at), and the points read
// after it, to tell a climb that went on from one that fell back. The
// judge is the caller's (package ahead holds the rules), so a reader keeps
// its fixed memory per series without knowing the rule.
//
// May import: the standard library only.
package climb
