package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// emit writes a response: its JSON (plainJSON) with --output json, else the rows
// table gives (a header row first), aligned in columns.
func emit(c *adminConfig, w io.Writer, m proto.Message, table func() [][]string) error {
	if c.Output == "json" {
		b, err := plainJSON(m)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range table() {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// emitJSON writes parts as one JSON object, each part as plainJSON renders it.
func emitJSON(w io.Writer, parts map[string]proto.Message) error {
	obj := map[string]json.RawMessage{}
	for k, m := range parts {
		b, err := plainJSON(m)
		if err != nil {
			return err
		}
		obj[k] = b
	}
	b, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// bucketRows is the table of buckets.
func bucketRows(bs ...*adminv1.Bucket) [][]string {
	rows := [][]string{{"ID", "PUBLIC", "MIN SIZE", "MAX SIZE", "MIME TYPES", "PRESIGNED", "EXPIRATION", "CACHE-CONTROL"}}
	for _, b := range bs {
		rows = append(rows, []string{b.GetId(), fmt.Sprint(b.GetPublic()), fmt.Sprint(b.GetMinUploadFileSize()),
			fmt.Sprint(b.GetMaxUploadFileSize()), orAny(b.GetAllowedMimeTypes()), fmt.Sprint(b.GetPresignedUrlsEnabled()),
			fmt.Sprintf("%ds", b.GetDownloadExpiration()), b.GetCacheControl()})
	}
	return rows
}

// orAny joins MIME types, "*" for none.
func orAny(types []string) string {
	if len(types) == 0 {
		return "*"
	}
	return strings.Join(types, ",")
}

// fileRows is the table of files.
func fileRows(fs ...*adminv1.File) [][]string {
	rows := [][]string{{"ID", "BUCKET", "NAME", "SIZE", "MIME TYPE", "UPLOADED", "UPDATED"}}
	for _, f := range fs {
		rows = append(rows, []string{f.GetId(), f.GetBucketId(), f.GetName(), fmt.Sprint(f.GetSize()), f.GetMimeType(),
			fmt.Sprint(f.GetIsUploaded()), f.GetUpdatedAt().AsTime().Format("2006-01-02 15:04:05")})
	}
	return rows
}

// listingRows is fileRows with a listing's prefixes among the files, by name: a
// prefix's row has "PREFIX" for an id.
func listingRows(bucket string, fs []*adminv1.File, prefixes []string) [][]string {
	rows := fileRows()
	for _, f := range fs {
		for len(prefixes) > 0 && prefixes[0] < f.GetName() {
			rows, prefixes = append(rows, []string{"PREFIX", bucket, prefixes[0], "", "", "", ""}), prefixes[1:]
		}
		rows = append(rows, fileRows(f)[1])
	}
	for _, p := range prefixes {
		rows = append(rows, []string{"PREFIX", bucket, p, "", "", "", ""})
	}
	return rows
}

// webhookRows is the table of webhook subscriptions.
func webhookRows(ws ...*adminv1.Webhook) [][]string {
	rows := [][]string{{"ID", "BUCKET", "EVENTS", "URL", "SECRET"}}
	for _, w := range ws {
		rows = append(rows, []string{w.GetId(), orAll(w.GetBucketId()), orAny(w.GetEvents()), w.GetUrl(), w.GetSecret()})
	}
	return rows
}

// orAll is a bucket filter, "*" for every bucket.
func orAll(bucket string) string {
	if bucket == "" {
		return "*"
	}
	return bucket
}

// deliveryRows is the table of deliveries.
func deliveryRows(ds ...*adminv1.Delivery) [][]string {
	rows := [][]string{{"ID", "STATE", "EVENT", "ATTEMPTS", "LAST STATUS", "LAST ERROR", "CREATED"}}
	for _, d := range ds {
		state := strings.ToLower(strings.TrimPrefix(d.GetState().String(), "DELIVERY_STATE_"))
		rows = append(rows, []string{fmt.Sprint(d.GetId()), state, d.GetEventType(), fmt.Sprint(d.GetAttempts()),
			fmt.Sprint(d.GetLastStatus()), d.GetLastError(), d.GetCreatedAt().AsTime().Format("2006-01-02 15:04:05")})
	}
	return rows
}

// withNextPage adds to a page's rows how to ask for the next page, if there is one.
func withNextPage(rows [][]string, next string) [][]string {
	if next != "" {
		rows = append(rows, []string{"next page: --page-token " + next})
	}
	return rows
}

// lines is a one-column table.
func lines(header string, items ...string) [][]string {
	rows := [][]string{{header}}
	for _, it := range items {
		rows = append(rows, []string{it})
	}
	return rows
}

// asConnect finds the Connect error in err.
func asConnect(err error, ce **connect.Error) bool { return errors.As(err, ce) }

// violationField returns the field of ce's first BadRequest violation, "" if none.
func violationField(ce *connect.Error) string {
	for _, d := range ce.Details() {
		v, err := d.Value()
		if br, ok := v.(*errdetails.BadRequest); err == nil && ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	return ""
}
