package tinylimits

import "context"

// key is the context key of the option.
type key struct{}

// With returns a context under which the analysis runs with tiny limits.
func With(ctx context.Context) context.Context {
	return context.WithValue(ctx, key{}, true)
}

// On reports whether ctx asks for tiny limits.
func On(ctx context.Context) bool {
	on, _ := ctx.Value(key{}).(bool)
	return on
}
