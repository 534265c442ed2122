package osm

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BootState is where the provisioning of one machine is.
type BootState string

// Boot states.
const (
	BootStateProvisioning BootState = "Provisioning"
	BootStateSucceeded    BootState = "Succeeded"
	BootStateFailed       BootState = "Failed"
)

// ReasonNodeRegistered is the reason of a report the server completed
// because the machine's Node registered before the node's final record came.
const ReasonNodeRegistered = "NodeRegistered"

// StepPhase is what a node says of one step: it started, succeeded or failed.
type StepPhase string

// Step phases.
const (
	StepPhaseStarted   StepPhase = "Started"
	StepPhaseSucceeded StepPhase = "Succeeded"
	StepPhaseFailed    StepPhase = "Failed"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BootReport is what one machine reported of its provisioning, step by step.
// One per machine, named after it, in its MachineDeployment's namespace.
type BootReport struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   BootReportSpec
	Status BootReportStatus
}

// BootReportSpec says which machine and boot a report is of (see v1alpha1).
type BootReportSpec struct {
	MachineDeployment         string
	Machine                   string
	BootID                    string
	Profile                   ProfileReference
	MachineDeploymentRevision string
}

// BootReportStatus is the state of the provisioning and every step (see v1alpha1).
type BootReportStatus struct {
	State          BootState
	Step           string
	Message        string
	StartTime      *metav1.Time
	LastUpdateTime *metav1.Time
	CompletionTime *metav1.Time
	Reason         string
	Boots          int32
	Steps          []BootReportStep
}

// BootReportStep is one step of a boot as reported (see v1alpha1).
type BootReportStep struct {
	Name       string
	Phase      StepPhase
	StartTime  *metav1.Time
	FinishTime *metav1.Time
	Duration   *metav1.Duration
	ExitCode   *int32
	Attempts   int32
	LogTail    string
	// LastFailure is the step's last failed attempt, kept when it started again.
	LastFailure *BootStepFailure
}

// BootStepFailure is a failed attempt of a step.
type BootStepFailure struct {
	StartTime  *metav1.Time
	FinishTime *metav1.Time
	Duration   *metav1.Duration
	ExitCode   *int32
	LogTail    string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BootReportList is a list of BootReports.
type BootReportList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []BootReport
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BootStep is one step record a node posts to bootreports/<machine>/step.
// Nothing is stored as this kind: the record updates the machine's BootReport.
type BootStep struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   BootStepSpec
	Status BootStepStatus
}

// BootStepSpec is the record (see v1alpha1).
type BootStepSpec struct {
	Step                      string
	Phase                     StepPhase
	ExitCode                  *int32
	Duration                  *metav1.Duration
	BootID                    string
	BootSecret                string
	Profile                   ProfileReference
	MachineDeploymentRevision string
	LogTail                   string
	Final                     bool
}

// BootStepStatus is the answer: the report's state after the record.
type BootStepStatus struct {
	State BootState
}

// MachineSummary counts the boot reports of a MachineDeployment's machines
// (see v1alpha1).
type MachineSummary struct {
	Current      int32
	Older        int32
	Failed       int32
	Provisioning int32
}
