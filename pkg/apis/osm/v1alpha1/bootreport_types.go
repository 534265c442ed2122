package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BootState is where the provisioning of one machine is.
type BootState string

// Boot states.
const (
	// BootStateProvisioning: steps are running, none failed.
	BootStateProvisioning BootState = "Provisioning"
	// BootStateSucceeded: the step that ends provisioning succeeded.
	BootStateSucceeded BootState = "Succeeded"
	// BootStateFailed: a step failed.
	BootStateFailed BootState = "Failed"
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
// +genclient
// +genclient:onlyVerbs=get,list,watch
// +genclient:method=CreateStep,verb=create,subresource=step,input=github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1.BootStep,result=github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1.BootStep

// BootReport is what one machine reported of its provisioning, step by step,
// before (and until shortly after) its kubelet registered: which step runs,
// which failed, with its exit code and the last lines of its output. One per
// machine, named after the machine, in its MachineDeployment's namespace.
// Nodes write it one step at a time through the subresource step (kind
// BootStep), with their MachineDeployment's fetch credential; it is read-only
// otherwise, and goes with its Machine or MachineDeployment, or when it expires.
type BootReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BootReportSpec   `json:"spec"`
	Status BootReportStatus `json:"status,omitempty"`
}

// BootReportSpec says which machine and which boot a report is of.
type BootReportSpec struct {
	// MachineDeployment is the name of the machine's MachineDeployment, in the
	// same namespace.
	MachineDeployment string `json:"machineDeployment"`
	// Machine is the name of the machine (and of the report).
	Machine string `json:"machine"`
	// BootID is the node's boot ID (/proc/sys/kernel/random/boot_id) of the
	// boot reported; a report from another boot starts the steps again.
	// +optional
	BootID string `json:"bootID,omitempty"`
	// Profile is the OperatingSystemProfile (name and version) the node was
	// provisioned from, as the node says.
	// +optional
	Profile ProfileReference `json:"profile,omitempty"`
	// MachineDeploymentRevision is the MachineDeployment revision of the
	// payload the node was provisioned with, as the node says.
	// +optional
	MachineDeploymentRevision string `json:"machineDeploymentRevision,omitempty"`
}

// BootReportStatus is the state of the provisioning and of every step.
type BootReportStatus struct {
	// State is Provisioning while steps run, Failed when the last record
	// was a step's failure (a step started again, or a later one, makes it
	// Provisioning again), Succeeded once the step that ends provisioning
	// succeeded.
	// +optional
	State BootState `json:"state,omitempty"`
	// Step is the step running, or the last one that ended.
	// +optional
	Step string `json:"step,omitempty"`
	// Message says in one line what happened last, e.g. which step failed,
	// its exit code and the first error line of its output.
	// +optional
	Message string `json:"message,omitempty"`
	// StartTime is when the first step of this boot was reported.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// LastUpdateTime is when the last step record was received.
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// CompletionTime is when the report became Succeeded or Failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Reason says why the report is in its state when the node did not say
	// so: NodeRegistered when the machine's Node registered while the report
	// was still Provisioning (the final record had not come), and the
	// server completed it from the Node. A later record of the node wins.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Boots counts the boots (boot IDs) that reported; only the last one's
	// steps are kept.
	// +optional
	Boots int32 `json:"boots,omitempty"`
	// Steps are the steps of the boot in the order they were first reported.
	// +optional
	// +listType=map
	// +listMapKey=name
	Steps []BootReportStep `json:"steps,omitempty"`
}

// BootReportStep is one step of a boot as reported. Times are the server's,
// when it received the record; Duration is the node's measure.
type BootReportStep struct {
	// Name of the step, e.g. container-runtime.
	Name string `json:"name"`
	// Phase is Started (running), Succeeded or Failed.
	Phase StepPhase `json:"phase"`
	// StartTime is when the step was reported started (or, if it was not,
	// its end less its duration).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// FinishTime is when the step was reported ended.
	// +optional
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
	// Duration is how long the step ran, measured on the node.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// ExitCode of the step's command.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// Attempts counts the times the step was reported started or ended
	// without an end in between (a step retried by the node).
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// LogTail is the end of a failed step's output: at most 40 lines and
	// 4 KiB, with anything that looks like a credential (bearer tokens,
	// JWTs, bootstrap tokens, private keys) replaced by "[redacted]".
	// +optional
	LogTail string `json:"logTail,omitempty"`
	// LastFailure is the step's last failed attempt, kept when the step
	// started again (osm-setup retries a failed provisioning): the report is
	// Provisioning again, and the failure that made it retry stays visible.
	// Its log tail counts against the failed steps whose log tail a report
	// keeps (the latest 8).
	// +optional
	LastFailure *BootStepFailure `json:"lastFailure,omitempty"`
}

// BootStepFailure is a failed attempt of a step. Times are the server's.
type BootStepFailure struct {
	// StartTime is when the attempt was reported started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// FinishTime is when the attempt was reported failed.
	// +optional
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
	// Duration is how long the attempt ran, measured on the node.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// ExitCode of the attempt's command.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// LogTail is the end of the attempt's output, as LogTail of the step.
	// +optional
	LogTail string `json:"logTail,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BootReportList is a list of BootReports.
type BootReportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []BootReport `json:"items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BootStep is one step record a node posts to
// bootreports/<machine>/step in its MachineDeployment's namespace, with the
// MachineDeployment's fetch credential. Nothing is stored as this kind: the
// record updates the machine's BootReport, and the answer's status says the
// report's state after it.
type BootStep struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BootStepSpec `json:"spec"`
	// +optional
	Status BootStepStatus `json:"status,omitempty"`
}

// BootStepSpec is one step record.
type BootStepSpec struct {
	// Step is the name of the step: lower-case letters, digits, '-', '.'
	// and '_', at most 63 characters.
	Step string `json:"step"`
	// Phase is Started, Succeeded or Failed.
	Phase StepPhase `json:"phase"`
	// ExitCode of the step's command, for Succeeded and Failed.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// Duration of the step, measured on the node, for Succeeded and Failed.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// BootID is the node's boot ID.
	// +optional
	BootID string `json:"bootID,omitempty"`
	// BootSecret is the secret the boot sent with its MachineJoin
	// (/run/osm/boot-secret): once a machine was answered, only records of
	// the answered boot, which alone holds it, are taken. It is checked and
	// dropped, never stored or answered.
	// +optional
	BootSecret string `json:"bootSecret,omitempty"`
	// Profile is the OperatingSystemProfile (name and version) the node was
	// provisioned from.
	// +optional
	Profile ProfileReference `json:"profile,omitempty"`
	// MachineDeploymentRevision is the revision of the payload the node was
	// provisioned with.
	// +optional
	MachineDeploymentRevision string `json:"machineDeploymentRevision,omitempty"`
	// LogTail is the end of the step's output (kept for failed steps only):
	// the server keeps its last 40 lines and 4 KiB, scrubbed of anything that
	// looks like a credential.
	// +optional
	LogTail string `json:"logTail,omitempty"`
	// Final marks the step that ends provisioning: its success makes the
	// report Succeeded.
	// +optional
	Final bool `json:"final,omitempty"`
}

// BootStepStatus is the answer to a step record.
type BootStepStatus struct {
	// State is the report's state after the record.
	// +optional
	State BootState `json:"state,omitempty"`
}

// MachineSummary counts the boot reports of a MachineDeployment's machines.
type MachineSummary struct {
	// Current counts machines provisioned (Succeeded) with the
	// MachineDeployment's current revision.
	// +optional
	Current int32 `json:"current,omitempty"`
	// Older counts machines provisioned with an older revision.
	// +optional
	Older int32 `json:"older,omitempty"`
	// Failed counts machines whose provisioning failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// Provisioning counts machines whose provisioning is under way.
	// +optional
	Provisioning int32 `json:"provisioning,omitempty"`
}
