package server

import (
	"context"
	"sync"

	"k8s.io/klog/v2"
)

// leaderController is a controller that only the leader runs. run is called
// at the start of each leadership term with a context that ends with the term,
// and must return when it ends; an error is logged, the others keep running.
type leaderController struct {
	name string
	run  func(context.Context) error
}

// runLeaderControllers runs every controller for one leadership term and
// returns once all of them returned, so that the next term never overlaps it.
func runLeaderControllers(ctx context.Context, controllers []leaderController) {
	var term sync.WaitGroup
	for _, c := range controllers {
		term.Go(func() {
			if err := c.run(ctx); err != nil {
				// A configuration error: the API keeps serving through it.
				klog.FromContext(ctx).Error(err, "Leader's controller stopped", "controller", c.name)
			}
		})
	}
	term.Wait()
}
