package rpcapi

import (
	"testing"

	contract "github.com/coffer/coffer/proto"
)

// TestDescriptorSetIndex: the embedded set indexes every service, method, message,
// nested type and enum to its file; a malformed or empty set is an error.
func TestDescriptorSetIndex(t *testing.T) {
	idx, err := indexSet(contract.Descriptors)
	if err != nil {
		t.Fatal(err)
	}
	for sym, file := range map[string]string{
		"coffer.admin.v1.BucketService":                    "coffer/admin/v1/buckets.proto",
		"coffer.admin.v1.BucketService.ListBuckets":        "coffer/admin/v1/buckets.proto",
		"coffer.admin.v1.Bucket":                           "coffer/admin/v1/resources.proto",
		"coffer.admin.v1.DeliveryState":                    "coffer/admin/v1/resources.proto",
		"coffer.admin.v1.OpsService.Sweep":                 "coffer/admin/v1/ops.proto",
		"coffer.admin.v1.TenantService.CreateTenant":       "coffer/admin/v1/tenants.proto",
		"coffer.admin.v1.TenantLimits":                     "coffer/admin/v1/tenants.proto",
		"grpc.health.v1.HealthCheckResponse.ServingStatus": "grpc/health/v1/health.proto",
		"grpc.reflection.v1.ServerReflection":              "grpc/reflection/v1/reflection.proto",
		"google.protobuf.Timestamp":                        "google/protobuf/timestamp.proto",
	} {
		if got := idx.symbols[sym]; got != file {
			t.Errorf("%s is in %q, want %q", sym, got, file)
		}
	}
	for _, s := range services {
		if idx.symbols[s] == "" {
			t.Errorf("service %s is not in the descriptor set", s)
		}
	}
	sent := map[string]bool{}
	if got := idx.withImports("coffer/admin/v1/buckets.proto", sent); len(got) != 3 { // buckets, resources, timestamp
		t.Errorf("buckets.proto with its imports: %d files", len(got))
	}
	if got := idx.withImports("coffer/admin/v1/files.proto", sent); len(got) != 1 { // its imports went already
		t.Errorf("files.proto after buckets.proto: %d files", len(got))
	}
	for _, bad := range [][]byte{nil, {0x0a, 0x05, 0x0a}, {0xff}} {
		if _, err := indexSet(bad); err == nil {
			t.Errorf("indexSet(%x) read a malformed set", bad)
		}
	}
}
