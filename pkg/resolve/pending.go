package resolve

import "errors"

// PendingError says a render waits for an input that appears without anyone
// acting, such as the tokens the syncer creates for a new MachineDeployment.
// The API shows it as a state, not as an error.
type PendingError struct {
	// Reason says what is awaited, e.g. "waiting for the syncer to create tokens".
	Reason string
}

func (e *PendingError) Error() string {
	return e.Reason
}

// Pending returns the reason when the render waits for an input.
func (e *Rendered) Pending() (string, bool) {
	if e.Err == nil {
		return "", false // errors.As allocates
	}
	var p *PendingError
	if errors.As(e.Err, &p) {
		return p.Reason, true
	}
	return "", false
}
