package rpcapi

import (
	"testing"

	"google.golang.org/protobuf/proto"

	contract "github.com/coffer/coffer/proto"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	reflectionv1 "github.com/coffer/coffer/proto/gen/grpc/reflection/v1"
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
	f.Fuzz(func(t *testing.T, in string) {
		for _, m := range []proto.Message{&adminv1.CreateBucketRequest{}, &adminv1.CreateWebhookRequest{},
			&adminv1.ListDeliveriesRequest{}, &adminv1.UpdateFileRequest{}} {
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
	case *adminv1.UpdateFileRequest:
		if md := metadataArg(m.MetadataJson); (md == nil) != (m.MetadataJson == nil) {
			t.Fatalf("metadata %q of %v", md, m)
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
