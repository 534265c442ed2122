package node

import (
	"context"
	"fmt"
	"time"
)

// progressEvery is how often a long wait says what it waits for.
const progressEvery = 30 * time.Second

// waitFor polls check every 2 s until it reports nothing pending, fails, or
// timeout passes. check returns what is still missing ("" when done).
// Every 30 s it prints what it waits for, for how long, what is missing, and
// what detail adds (e.g. the guest's units), if detail is not nil.
func waitFor(ctx context.Context, what string, timeout time.Duration, check func() (string, error), detail ...func() string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	lastReport := start
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	pending := ""
	for {
		var err error
		pending, err = check()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if pending == "" {
			return nil
		}
		if time.Since(lastReport) >= progressEvery {
			lastReport = time.Now()
			extra := ""
			for _, d := range detail {
				if s := d(); s != "" {
					extra += "; " + s
				}
			}
			progress("waiting for %s: %d s of %d s; %s%s", what, int(time.Since(start).Seconds()), int(timeout.Seconds()), pending, extra)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not after %s (%s)", what, timeout, pending)
		case <-tick.C:
		}
	}
}
