package host

import (
	"context"
	"fmt"

	"github.com/palacehq/palace/policies"
)

// PolicyReload is one reload attempt of a policy watch, as a long-running
// surface reports it.
type PolicyReload struct {
	// Set is the set now serving: the new one after a good reload, the
	// last good one after a failed reload, or nil when no set has loaded
	// or a file the last good set was built from is gone.
	Set *policies.Set
	// Err is nil after a good reload, else the reason the new files did
	// not load: PolicyErrors (file:line:col) when they could be located.
	Err error
}

// KeptLastGood says a reload failed while the last good set keeps serving.
func (r PolicyReload) KeptLastGood() bool { return r.Err != nil && r.Set != nil }

// Message is the line a surface logs for r, the same on every surface.
func (r PolicyReload) Message() string {
	switch {
	case r.Err == nil && r.Set != nil:
		return "policies loaded (" + r.Set.Hash() + ")"
	case r.Err == nil:
		return "policies loaded"
	case r.Set != nil:
		return fmt.Sprintf("policies did not load, the last good set keeps serving: %v", r.Err)
	}
	return fmt.Sprintf("policies did not load and no good set is left (a file it used was deleted): gate and mailbox fail closed, scope and lanes use the embedded defaults: %v", r.Err)
}

// PolicyWatch keeps a host's policy set current until it is stopped or
// the context it was started with ends.
type PolicyWatch struct {
	cancel context.CancelFunc
	w      *policies.Watcher
}

// Stop ends the watch and waits until its goroutine has returned (so the
// caller may close the host after it).
func (w *PolicyWatch) Stop() {
	w.cancel()
	<-w.w.Done()
}

// Done is closed when the watch has ended.
func (w *PolicyWatch) Done() <-chan struct{} { return w.w.Done() }

// WatchPolicies keeps the host's policy set current until ctx ends or the
// watch stops: edits are debounced, compiled aside and swapped in. A failed
// reload keeps the last good set serving while its files all exist;
// otherwise Policies returns the errors. onReload (may be nil) hears every
// attempt on the watch's goroutine. A watch that cannot start is an error,
// and the host then loads its set on first use.
func (h *Host) WatchPolicies(ctx context.Context, onReload func(PolicyReload)) (*PolicyWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w, err := policies.Watch(ctx, h.PolicySources(), policies.WatchOptions{Options: h.PolicyOptions()}, func(set *policies.Set, err error) {
		// The watcher's serving set is the host's: after a failed reload
		// it is the last good set, or nil when a file that set was built
		// from is gone (the errors then stand in for it, and points fail
		// as they do without a set).
		h.policyMu.Lock()
		h.policySet, h.policyErr = set, nil
		if set == nil {
			h.policyErr = err
		}
		h.policyMu.Unlock()
		if onReload != nil {
			onReload(PolicyReload{Set: set, Err: err})
		}
	})
	if err != nil {
		cancel()
		return nil, internal(err, "watch the policies of %s", h.home)
	}
	return &PolicyWatch{cancel: cancel, w: w}, nil
}
