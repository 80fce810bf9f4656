package rpcapi

import (
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/coffer/coffer"
	contract "github.com/coffer/coffer/proto"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	reflectionv1 "github.com/coffer/coffer/proto/gen/grpc/reflection/v1"
	"github.com/coffer/coffer/tenant"
)

// FuzzRequests decodes untrusted bytes as the face does, as JSON (strictJSON) and as
// binary protobuf, into the requests whose fields the face converts, then converts
// them: nothing panics, an unknown delivery state is refused, and what strictJSON
// accepts survives its own round trip.
func FuzzRequests(f *testing.F) {
	f.Add(`{"id":"docs","settings":{"public":true,"allowedMimeTypes":{"types":["image/*"]}}}`)
	f.Add(`{"url":"http://hooks.test/x","events":["file.created"],"bucketId":"b"}`)
	f.Add(`{"webhookId":"w","state":"DELIVERY_STATE_DEAD","limit":5}`)
	f.Add(`{"id":"f","name":"a/b.txt","metadataJson":"{}"}`)
	f.Add(`{"publc": true}`)
	f.Add("\x0a\x04docs\x12\x02\x38\x01")
	f.Add(`{"id":"acme","hosts":["a.test"],"settings":{"adminSecrets":["s"],"presignKey":"k","storage":{"secretAccessKey":"x"},"limits":{"burst":2}}}`)
	f.Add(`{"id":"acme","hosts":{"hosts":[]},"quota":{"maxBytes":"-1"},"settings":{"limits":{"requestsPerSecond":"NaN"}}}`)
	f.Add(`{"pageSize":2,"pageToken":"Yg"}`)
	f.Add(`{"id":"f","expiresInSeconds":"-9223372036854775808"}`)
	f.Add(`{"id":"a","settings":{"jwt":"{\"type\":\"HS256\",\"key\":\"k\"}"}}`)
	f.Fuzz(func(t *testing.T, in string) {
		for _, m := range []proto.Message{&adminv1.CreateBucketRequest{}, &adminv1.CreateWebhookRequest{},
			&adminv1.ListDeliveriesRequest{}, &adminv1.UpdateFileRequest{}, &adminv1.CreateTenantRequest{},
			&adminv1.UpdateTenantRequest{}, &adminv1.ListTenantsRequest{}, &adminv1.PresignFileRequest{}} {
			if jsonCodecs[0].Unmarshal([]byte(in), m) == nil {
				convert(t, m)
				roundTrip(t, m)
			}
			m2 := m.ProtoReflect().New().Interface()
			if proto.Unmarshal([]byte(in), m2) == nil {
				convert(t, m2)
			}
		}
	})
}

// convert runs the face's conversions of m.
func convert(t *testing.T, m proto.Message) {
	switch m := m.(type) {
	case *adminv1.CreateBucketRequest:
		u := bucketUpdate(m.GetSettings())
		if (u.AllowedMimeTypes != nil) != (m.GetSettings().GetAllowedMimeTypes() != nil) {
			t.Fatalf("allowed MIME types lost or made up: %v", m)
		}
	case *adminv1.CreateWebhookRequest:
		if s := subscription(m); len(s.Events) != len(m.GetEvents()) || s.URL != m.GetUrl() {
			t.Fatalf("subscription %+v of %v", s, m)
		}
	case *adminv1.ListDeliveriesRequest:
		_, err := deliveryState(m.GetState())
		if _, known := adminv1.DeliveryState_name[int32(m.GetState())]; known != (err == nil) {
			t.Fatalf("state %d: known %v, error %v", m.GetState(), known, err)
		}
		_ = limitArg(m.GetLimit())
	case *adminv1.CreateTenantRequest, *adminv1.UpdateTenantRequest, *adminv1.ListTenantsRequest:
		convertTenant(t, m)
	case *adminv1.UpdateFileRequest:
		if md := metadataArg(m.MetadataJson); (md == nil) != (m.MetadataJson == nil) {
			t.Fatalf("metadata %q of %v", md, m)
		}
	case *adminv1.PresignFileRequest:
		secs := m.GetExpiresInSeconds()
		d := presignTTL(secs)
		if d < -time.Second || d > coffer.MaxDownloadExpiration*time.Second || (d < 0) != (secs < 0) ||
			secs >= 0 && secs <= coffer.MaxDownloadExpiration && d != time.Duration(secs)*time.Second {
			t.Fatalf("expiresInSeconds %d: %v", secs, d)
		}
	}
}

// convertTenant runs TenantService's conversions of m: settings accepted are within
// bounds, read back, and answer no secret; pages hold what follows their token.
func convertTenant(t *testing.T, m proto.Message) {
	switch m := m.(type) {
	case *adminv1.CreateTenantRequest:
		ten, err := newTenant(m)
		if err != nil {
			return
		}
		doc, err := json.Marshal(ten.Settings)
		if err != nil || len(doc) > 2*maxSettingsBytes || len(ten.ID) > maxTenantID || len(ten.Hosts) > maxTenantHosts {
			t.Fatalf("out of bounds (%v): %+v", err, ten)
		}
		pb := tenantPB(&tenant.View{ID: ten.ID, Hosts: ten.Hosts, Settings: ten.Settings.Redacted()})
		if s := pb.GetSettings(); len(s.GetAdminSecrets()) > 0 || s.GetPresignKey() != "" || s.GetStorage().GetSecretAccessKey() != "" ||
			int(s.GetAdminSecretsCount()) != len(m.GetSettings().GetAdminSecrets()) {
			t.Fatalf("answered %v for %v", s, m.GetSettings())
		}
		var jwt map[string]json.RawMessage
		if j := pb.GetSettings().GetJwt(); j != "" && (json.Unmarshal([]byte(j), &jwt) != nil || jwt["key"] != nil && string(jwt["key"]) != `{"set":true}`) {
			t.Fatalf("answered JWT document %s for %s", j, m.GetSettings().GetJwt())
		}
	case *adminv1.UpdateTenantRequest:
		if u, err := tenantUpdate(m); err == nil && ((u.Hosts != nil) != (m.Hosts != nil) || (u.Settings != nil) != (m.Settings != nil)) {
			t.Fatalf("update %+v of %v", u, m)
		}
	case *adminv1.ListTenantsRequest:
		size, after, err := tenantPageArgs(m)
		if err != nil {
			return
		}
		all := []*tenant.View{{ID: "a"}, {ID: "b"}, {ID: "c"}}
		page := tenantPage(all, size, after)
		if len(page.GetTenants()) > size || len(page.GetTenants()) > 0 && page.GetTenants()[0].GetId() <= after {
			t.Fatalf("page %v after %q (size %d): %v", page, after, size, err)
		}
	}
}

// roundTrip checks that strictJSON reads back what it writes of m.
func roundTrip(t *testing.T, m proto.Message) {
	b, err := jsonCodecs[0].Marshal(m)
	if err != nil {
		t.Fatalf("marshal %v: %v", m, err)
	}
	back := m.ProtoReflect().New().Interface()
	if err := jsonCodecs[0].Unmarshal(b, back); err != nil || !proto.Equal(m, back) {
		t.Fatalf("round trip of %v through %s: %v, %v", m, b, back, err)
	}
}

// FuzzReflection answers untrusted reflection requests (binary protobuf, as gRPC
// carries them) from the contract's descriptor set: nothing panics, every request
// gets an answer, and a file is only ever one of the set's.
func FuzzReflection(f *testing.F) {
	f.Add([]byte("\x3a\x01*"))                             // list_services
	f.Add([]byte("\x1a\x1dcoffer/admin/v1/buckets.proto")) // file_by_filename
	f.Add([]byte("\x22\x1dcoffer.admin.v1.BucketService")) // file_containing_symbol
	f.Add([]byte("\x2a\x00"))                              // file_containing_extension
	f.Add([]byte("\x32\x16coffer.admin.v1.Bucket"))        // all_extension_numbers_of_type
	r := newReflector(contract.Descriptors, services...)
	idx, err := r.loaded()
	if err != nil {
		f.Fatal(err)
	}
	known := map[string]bool{}
	for _, file := range idx.files {
		known[string(file.raw)] = true
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		req := &reflectionv1.ServerReflectionRequest{}
		if proto.Unmarshal(in, req) != nil {
			return
		}
		res := &reflectionv1.ServerReflectionResponse{}
		r.answer(req, res, map[string]bool{})
		if res.MessageResponse == nil {
			t.Fatalf("no answer to %v", req)
		}
		for _, raw := range res.GetFileDescriptorResponse().GetFileDescriptorProto() {
			if !known[string(raw)] {
				t.Fatalf("answered a file that is not in the set, for %v", req)
			}
		}
	})
}
