package machinecontroller

// MaxSecretSize is the most user-data a payload Secret holds: kube-apiserver
// refuses a Secret whose data add up to more than 1 MiB.
const MaxSecretSize = 1 << 20

// userDataLimits are the user-data size limits of clouds, in bytes of the
// user-data as the Secret holds it (machine-controller base64-encodes it for the
// clouds that want that). Clouds not listed have no documented limit: 0.
var userDataLimits = map[string]int64{
	// EC2: "user data is limited to 16 KB, in raw form, before it is base64-encoded".
	"aws": 16 * 1024,
	// Azure: customData is at most 87,380 base64 characters, i.e. 65,535 raw bytes.
	"azure": 65535,
	// GCE: a metadata value (user-data is one) is at most 256 KB.
	"gce": 256 * 1024,
	// Hetzner Cloud: user_data "is limited to 32KiB".
	"hetzner": 32 * 1024,
	// DigitalOcean: user_data is limited to 64 KiB.
	"digitalocean": 64 * 1024,
	// OpenStack Nova: base64-encoded user_data is limited to 65,535 bytes, so
	// 65,535 / 4 * 3 raw bytes.
	"openstack": 49149,
}

// UserDataLimit returns the user-data size limit of a cloud provider, 0 if
// unknown. machine-controller passes the bootstrap payload to the cloud as
// user-data; the node fetches the provisioning payload itself.
func UserDataLimit(cloudProvider string) int64 {
	return userDataLimits[cloudProvider]
}
