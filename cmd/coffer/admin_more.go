package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// filesListCmd is `files list BUCKET [--prefix P] [--delimiter /] [--page-size N] [--page-token T]`.
func filesListCmd(c *adminConfig) *cobra.Command {
	var prefix, token, delimiter string
	var size int32
	list := leaf("list BUCKET", "List a bucket's files, one page", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.files().ListFiles(cmd.Context(), req(&adminv1.ListFilesRequest{BucketId: a[0], Prefix: prefix,
			PageSize: size, PageToken: token, Delimiter: delimiter}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string {
			return withNextPage(listingRows(a[0], res.Msg.GetFiles(), res.Msg.GetPrefixes()), res.Msg.GetNextPageToken())
		})
	})
	list.Flags().StringVar(&prefix, "prefix", "", "only names beginning with this")
	list.Flags().StringVar(&delimiter, "delimiter", "", `"/": one level below --prefix, folders listed as their prefix`)
	list.Flags().Int32Var(&size, "page-size", 0, "files per page, 1..1000 (0: 100)")
	list.Flags().StringVar(&token, "page-token", "", "the next page's token, from the previous page")
	return list
}

// filesCmd is `coffer admin files`.
func filesCmd(c *adminConfig) *cobra.Command {
	get := leaf("get ID", "Show a file's metadata", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.files().GetFile(cmd.Context(), req(&adminv1.GetFileRequest{Id: a[0]}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return fileRows(res.Msg.GetFile()) })
	})
	del := leaf("delete ID", "Delete a file", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.files().DeleteFile(cmd.Context(), req(&adminv1.DeleteFileRequest{Id: a[0]}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return lines("DELETED", a[0]) })
	})
	var expires time.Duration
	presign := leaf("presign ID", "Print a presigned download URL of a file", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		asked := int64(expires / time.Second)
		res, err := c.files().PresignFile(cmd.Context(), req(&adminv1.PresignFileRequest{Id: a[0], ExpiresInSeconds: asked}))
		if err != nil {
			return err
		}
		if got := res.Msg.GetExpiresInSeconds(); asked > 0 && got < asked {
			fmt.Fprintf(cmd.ErrOrStderr(), "coffer admin: the URL lives %ds, not the %ds asked: the bucket's download expiration caps it "+
				"(coffer admin buckets update BUCKET --download-expiration N raises it)\n", got, asked)
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string {
			return [][]string{{"URL", "EXPIRES IN"}, {res.Msg.GetUrl(), fmt.Sprintf("%ds", res.Msg.GetExpiresInSeconds())}}
		})
	})
	presign.Flags().DurationVar(&expires, "expires", 0, "how long the URL lives (0: the bucket's download expiration, which caps it)")
	return group("files", "Files' metadata (uploads and downloads stay on /v1)", filesListCmd(c), get, del, presign)
}

// webhooksCmd is `coffer admin webhooks`.
func webhooksCmd(c *adminConfig) *cobra.Command {
	list := leaf("list", "List the webhook subscriptions", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		res, err := c.webhooks().ListWebhooks(cmd.Context(), req(&adminv1.ListWebhooksRequest{}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return webhookRows(res.Msg.GetWebhooks()...) })
	})
	get := leaf("get ID", "Show a subscription", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.webhooks().GetWebhook(cmd.Context(), req(&adminv1.GetWebhookRequest{Id: a[0]}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return webhookRows(res.Msg.GetWebhook()) })
	})
	del := leaf("delete ID", "Delete a subscription", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.webhooks().DeleteWebhook(cmd.Context(), req(&adminv1.DeleteWebhookRequest{Id: a[0]}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return lines("DELETED", a[0]) })
	})
	redeliver := leaf("redeliver ID DELIVERY", "Send a delivery again", cobra.ExactArgs(2), func(cmd *cobra.Command, a []string) error {
		var id int64
		if _, err := fmt.Sscan(a[1], &id); err != nil {
			return fmt.Errorf("DELIVERY must be a delivery's number, not %q", a[1])
		}
		res, err := c.webhooks().RedeliverDelivery(cmd.Context(), req(&adminv1.RedeliverDeliveryRequest{WebhookId: a[0], DeliveryId: id}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return lines("REDELIVERING", a[1]) })
	})
	return group("webhooks", "Webhook subscriptions and their deliveries", list, get, webhookCreateCmd(c), del, deliveriesCmd(c), redeliver)
}

// webhookCreateCmd is `webhooks create --url URL [--bucket B] [--events E,...]`.
func webhookCreateCmd(c *adminConfig) *cobra.Command {
	var url, bucket, secret string
	var events []string
	cmd := leaf("create", "Subscribe a URL to events (the secret is shown once)", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		res, err := c.webhooks().CreateWebhook(cmd.Context(), req(&adminv1.CreateWebhookRequest{Url: url, BucketId: bucket, Events: events, Secret: secret}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return webhookRows(res.Msg.GetWebhook()) })
	})
	cmd.Flags().StringVar(&url, "url", "", "where events are POSTed (required)")
	cmd.Flags().StringVar(&bucket, "bucket", "", "only this bucket's events (default: all)")
	cmd.Flags().StringSliceVar(&events, "events", nil, "only these event types (default: all)")
	cmd.Flags().StringVar(&secret, "secret", "", "signing secret (default: generated)")
	_ = cmd.MarkFlagRequired("url")
	return cmd
}

// deliveryStates are the --state values.
var deliveryStates = map[string]adminv1.DeliveryState{
	"": adminv1.DeliveryState_DELIVERY_STATE_UNSPECIFIED, "pending": adminv1.DeliveryState_DELIVERY_STATE_PENDING,
	"delivered": adminv1.DeliveryState_DELIVERY_STATE_DELIVERED, "dead": adminv1.DeliveryState_DELIVERY_STATE_DEAD,
}

// deliveriesCmd is `webhooks deliveries ID [--state S] [--limit N]`.
func deliveriesCmd(c *adminConfig) *cobra.Command {
	var state string
	var limit int32
	cmd := leaf("deliveries ID", "List a subscription's deliveries, newest first", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		st, ok := deliveryStates[state]
		if !ok {
			return fmt.Errorf("--state must be pending, delivered or dead, not %q", state)
		}
		res, err := c.webhooks().ListDeliveries(cmd.Context(), req(&adminv1.ListDeliveriesRequest{WebhookId: a[0], State: st, Limit: limit}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return deliveryRows(res.Msg.GetDeliveries()...) })
	})
	cmd.Flags().StringVar(&state, "state", "", "only pending, delivered or dead deliveries")
	cmd.Flags().Int32Var(&limit, "limit", 0, "at most this many, 1..1000 (0: 100)")
	return cmd
}

// opsCmd is `coffer admin ops`.
func opsCmd(c *adminConfig) *cobra.Command {
	var del bool
	orphans := leaf("orphans", "List (--delete: delete) blobs no file references", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		var keys []string
		if del {
			res, err := c.ops().DeleteOrphans(cmd.Context(), req(&adminv1.DeleteOrphansRequest{}))
			if err != nil {
				return err
			}
			return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return lines("DELETED BLOB", res.Msg.GetKeys()...) })
		}
		res, err := c.ops().ListOrphans(cmd.Context(), req(&adminv1.ListOrphansRequest{}))
		if err != nil {
			return err
		}
		keys = res.Msg.GetKeys()
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return lines("ORPHAN BLOB", keys...) })
	})
	orphans.Flags().BoolVar(&del, "delete", false, "delete them")
	return group("ops", "Maintenance: what crashes and failures left behind", orphans, brokenCmd(c), notUploadedCmd(c), sweepCmd(c), rejectionsCmd(c))
}

// brokenCmd is `ops broken-metadata [--delete]`.
func brokenCmd(c *adminConfig) *cobra.Command {
	var del bool
	cmd := leaf("broken-metadata", "List (--delete: delete) files whose blob is missing", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		if del {
			res, err := c.ops().DeleteBrokenMetadata(cmd.Context(), req(&adminv1.DeleteBrokenMetadataRequest{}))
			if err != nil {
				return err
			}
			return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return fileRows(res.Msg.GetFiles()...) })
		}
		res, err := c.ops().ListBrokenMetadata(cmd.Context(), req(&adminv1.ListBrokenMetadataRequest{}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return fileRows(res.Msg.GetFiles()...) })
	})
	cmd.Flags().BoolVar(&del, "delete", false, "delete them")
	return cmd
}

// notUploadedCmd is `ops not-uploaded`.
func notUploadedCmd(c *adminConfig) *cobra.Command {
	return leaf("not-uploaded", "List files whose upload never completed", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		res, err := c.ops().ListNotUploaded(cmd.Context(), req(&adminv1.ListNotUploadedRequest{}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return fileRows(res.Msg.GetFiles()...) })
	})
}

// sweepCmd is `ops sweep [--older-than D]`.
func sweepCmd(c *adminConfig) *cobra.Command {
	var age time.Duration
	cmd := leaf("sweep", "Run the sweeper now", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		res, err := c.ops().Sweep(cmd.Context(), req(&adminv1.SweepRequest{OlderThan: durationpb.New(age)}))
		if err != nil {
			return err
		}
		m := res.Msg
		return emit(c, cmd.OutOrStdout(), m, func() [][]string {
			return [][]string{{"ABANDONED UPLOADS", "TEMP FILES", "ORPHAN BLOBS"},
				{fmt.Sprint(m.GetAbandonedUploads()), fmt.Sprint(m.GetTempFiles()), fmt.Sprint(len(m.GetOrphanBlobs()))}}
		})
	})
	cmd.Flags().DurationVar(&age, "older-than", 24*time.Hour, "uploads older than this are abandoned")
	return cmd
}

// rejectionsCmd is `ops virus-rejections [--limit N]`.
func rejectionsCmd(c *adminConfig) *cobra.Command {
	var limit int32
	cmd := leaf("virus-rejections", "List the uploads the virus scanner refused", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		res, err := c.ops().ListVirusRejections(cmd.Context(), req(&adminv1.ListVirusRejectionsRequest{Limit: limit}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string {
			rows := [][]string{{"TIME", "BUCKET", "NAME", "SIGNATURE", "ROLE", "USER"}}
			for _, r := range res.Msg.GetRejections() {
				rows = append(rows, []string{r.GetTime().AsTime().Format(time.DateTime), r.GetBucketId(), r.GetName(), r.GetSignature(), r.GetRole(), r.GetUploadedByUserId()})
			}
			return rows
		})
	})
	cmd.Flags().Int32Var(&limit, "limit", 0, "at most this many, 1..1000 (0: 100)")
	return cmd
}

// serverCmd is `coffer admin server info`.
func serverCmd(c *adminConfig) *cobra.Command {
	info := leaf("info", "Show the server's version, image workers and caches", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		ver, err := c.server().GetVersion(cmd.Context(), req(&adminv1.GetVersionRequest{}))
		if err != nil {
			return err
		}
		iw, err := c.server().GetImageWorkers(cmd.Context(), req(&adminv1.GetImageWorkersRequest{}))
		if err != nil {
			return err
		}
		cs, err := c.server().GetCacheStats(cmd.Context(), req(&adminv1.GetCacheStatsRequest{}))
		if err != nil {
			return err
		}
		if c.Output == "json" {
			return emitJSON(cmd.OutOrStdout(), map[string]proto.Message{"version": ver.Msg, "imageWorkers": iw.Msg, "caches": cs.Msg})
		}
		return emit(c, cmd.OutOrStdout(), nil, func() [][]string { return serverRows(ver.Msg, iw.Msg, cs.Msg) })
	})
	return group("server", "The server's own state", info)
}

// serverRows is the table of server info.
func serverRows(v *adminv1.GetVersionResponse, w *adminv1.GetImageWorkersResponse, cs *adminv1.GetCacheStatsResponse) [][]string {
	rows := [][]string{{"VERSION", v.GetVersion()},
		{"IMAGE WORKERS", fmt.Sprintf("enabled=%v workers=%d busy=%d queued=%d queue-limit=%d starts=%d",
			w.GetEnabled(), w.GetWorkers(), w.GetBusy(), w.GetQueued(), w.GetQueueLimit(), w.GetWorkerStarts())}}
	for _, r := range w.GetRemoteWorkers() {
		rows = append(rows, []string{"REMOTE WORKER " + r.GetAddr(), fmt.Sprintf("healthy=%v in-flight=%d transforms=%d failures=%d last-error=%q",
			r.GetHealthy(), r.GetInFlight(), r.GetTransforms(), r.GetFailuresTotal(), r.GetLastError())})
	}
	for _, c := range cs.GetCaches() {
		rows = append(rows, []string{"CACHE " + c.GetName(), fmt.Sprintf("hits=%d misses=%d evictions=%d", c.GetHits(), c.GetMisses(), c.GetEvictions())})
	}
	return rows
}
