package app

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/install"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/review"
)

// diffOptions are the flags of `render --diff`.
type diffOptions struct {
	enabled      bool
	baseOSP      string
	baseOverlays []string
}

func (d *diffOptions) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&d.enabled, "diff", false, "Compare the render with the base render (--base-osp, --base-overlay) and print what changes; exit 0: the same payloads, 1: they differ, 2: an error.")
	fs.StringVar(&d.baseOSP, "base-osp", "", "With --diff, the OperatingSystemProfile manifest of the base render (default: --osp).")
	fs.StringArrayVar(&d.baseOverlays, "base-overlay", nil, "With --diff, an OperatingSystemProfileOverlay manifest of the base render, repeatable (default: none).")
}

// Exit codes of `render --diff`, as diff(1)'s.
const (
	exitSame   = 0
	exitDiffer = 1
	exitError  = 2
)

// exitCodeAnnotation, on the root command, carries the exit code of a
// command that chooses its own (render --diff) to ExitCode.
const exitCodeAnnotation = "osm-apiserver/exit-code"

// ExitCode is the process's exit code after root ran with code, component-base's
// cli.Run's: the code of a command that chose one, else code.
func ExitCode(root *cobra.Command, code int) int {
	if v, ok := root.Annotations[exitCodeAnnotation]; ok {
		if c, err := strconv.Atoi(v); err == nil {
			return c
		}
	}
	return code
}

// runDiff renders the base and the candidate and prints the review.
func (o *renderOptions) runDiff(cmd *cobra.Command) error {
	root := cmd.Root()
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[exitCodeAnnotation] = strconv.Itoa(exitError)
	if o.output == "osc" { // the default of plain renders
		o.output = "text"
	}
	if o.output != "text" && o.output != "yaml" {
		return fmt.Errorf("--output: %q is not text or yaml (with --diff)", o.output)
	}
	if err := o.validate(); err != nil {
		return err
	}
	in, err := o.inputs()
	if err != nil {
		return err
	}
	baseOSP := o.diff.baseOSP
	if baseOSP == "" {
		baseOSP = o.osp
	}
	before, err := o.side(in, baseOSP, o.diff.baseOverlays, cmd)
	if err != nil {
		return err
	}
	after, err := o.side(in, o.osp, o.overlays, cmd)
	if err != nil {
		return err
	}
	md := in.MachineDeployment
	r := review.Compare(before, after, review.NewDiffer())
	r.Namespace, r.Name = md.Namespace, md.Name
	if err := o.printReview(cmd, &r); err != nil {
		return err
	}
	if r.Error != "" {
		return errors.New(r.Error)
	}
	code := exitSame
	if r.Changed {
		code = exitDiffer
	}
	root.Annotations[exitCodeAnnotation] = strconv.Itoa(code)
	return nil
}

// side renders one side of the comparison: the profile of ospFile with the
// overlays of overlayFiles that apply to the MachineDeployment.
func (o *renderOptions) side(in render.Input, ospFile string, overlayFiles []string, cmd *cobra.Command) (review.Side, error) {
	var err error
	if in.OSP, err = decodeFile(ospFile, render.DecodeOSP); err != nil {
		return review.Side{}, err
	}
	if in.Overlays, err = o.applicable(in.MachineDeployment, overlayFiles, cmd.ErrOrStderr()); err != nil {
		return review.Side{}, err
	}
	r := render.NewRenderer()
	real, realErr := r.Render(in)
	in.View = true
	view, viewErr := r.Render(in)
	if viewErr == nil && realErr != nil {
		viewErr = realErr
	}
	s := review.FromResults(real, view, viewErr)
	s.Overlays = overlayRefs(in.Overlays)
	return s, nil
}

// printReview prints r as text, or as the ProfileReview the API would answer.
func (o *renderOptions) printReview(cmd *cobra.Command, r *osm.MachineDeploymentReview) error {
	if o.output == "text" {
		return review.WriteText(cmd.OutOrStdout(), r)
	}
	pr := &osm.ProfileReview{Status: osm.ProfileReviewStatus{Reviewed: 1, MachineDeployments: []osm.MachineDeploymentReview{*r}}}
	pr.Status.Changed, pr.Status.Failed = review.Summary(pr.Status.MachineDeployments)
	scheme := runtime.NewScheme()
	install.Install(scheme)
	out := &osmv1alpha1.ProfileReview{}
	if err := scheme.Convert(pr, out, nil); err != nil {
		return fmt.Errorf("converting the ProfileReview: %w", err)
	}
	out.APIVersion, out.Kind = osmv1alpha1.SchemeGroupVersion.String(), "ProfileReview"
	data, err := yaml.Marshal(out)
	if err != nil {
		return fmt.Errorf("marshalling the ProfileReview: %w", err)
	}
	_, err = cmd.OutOrStdout().Write(data)
	return err
}

// overlayRefs are the references an OSC's status shows.
func overlayRefs(ovs []*overlaysv1alpha1.OperatingSystemProfileOverlay) []osm.OverlayReference {
	var out []osm.OverlayReference
	for _, o := range ovs {
		out = append(out, osm.OverlayReference{Namespace: o.Namespace, Name: o.Name, Generation: o.Generation})
	}
	return out
}
