package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// leaf returns a command that runs fn with its arguments; fn's call errors become
// one line (callError).
func leaf(use, short string, args cobra.PositionalArgs, fn func(cmd *cobra.Command, args []string) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: args, RunE: func(cmd *cobra.Command, a []string) error {
		return callError(fn(cmd, a))
	}}
}

// group returns a command grouping subs.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	cmd.AddCommand(subs...)
	return cmd
}

// bucketsCmd is `coffer admin buckets`.
func bucketsCmd(c *adminConfig) *cobra.Command {
	list := leaf("list", "List the buckets", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		res, err := c.buckets().ListBuckets(cmd.Context(), req(&adminv1.ListBucketsRequest{}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return bucketRows(res.Msg.GetBuckets()...) })
	})
	get := leaf("get ID", "Show a bucket", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.buckets().GetBucket(cmd.Context(), req(&adminv1.GetBucketRequest{Id: a[0]}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return bucketRows(res.Msg.GetBucket()) })
	})
	del := leaf("delete ID", "Delete an empty bucket", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.buckets().DeleteBucket(cmd.Context(), req(&adminv1.DeleteBucketRequest{Id: a[0]}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return lines("DELETED", a[0]) })
	})
	return group("buckets", "Buckets and their settings", list, get, bucketWriteCmd(c, "create"), bucketWriteCmd(c, "update"), del)
}

// bucketWriteCmd is `buckets create ID` or `buckets update ID`, with a flag per
// setting: only the flags given are sent.
func bucketWriteCmd(c *adminConfig, verb string) *cobra.Command {
	var s struct {
		min, max, exp           int64
		public, presign, inline bool
		cacheShared             bool
		cacheControl            string
		mime                    []string
	}
	cmd := leaf(verb+" ID", verb+" a bucket (flags: the settings to set)", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		f, set := cmd.Flags(), &adminv1.BucketSettings{}
		ifChanged(f.Changed("min-size"), func() { set.MinUploadFileSize = proto.Int64(s.min) })
		ifChanged(f.Changed("max-size"), func() { set.MaxUploadFileSize = proto.Int64(s.max) })
		ifChanged(f.Changed("download-expiration"), func() { set.DownloadExpiration = proto.Int64(s.exp) })
		ifChanged(f.Changed("public"), func() { set.Public = proto.Bool(s.public) })
		ifChanged(f.Changed("presigned-urls"), func() { set.PresignedUrlsEnabled = proto.Bool(s.presign) })
		ifChanged(f.Changed("allow-inline"), func() { set.AllowInline = proto.Bool(s.inline) })
		ifChanged(f.Changed("cache-control"), func() { set.CacheControl = proto.String(s.cacheControl) })
		ifChanged(f.Changed("cache-control-shared"), func() { set.CacheControlShared = proto.Bool(s.cacheShared) })
		ifChanged(f.Changed("allowed-mime-types"), func() { set.AllowedMimeTypes = &adminv1.MimeTypes{Types: s.mime} })
		b, err := c.writeBucket(cmd.Context(), verb, a[0], set)
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), b, func() [][]string { return bucketRows(b) })
	})
	fs := cmd.Flags()
	fs.Int64Var(&s.min, "min-size", 0, "smallest upload, bytes")
	fs.Int64Var(&s.max, "max-size", 0, "largest upload, bytes (0: no limit but the server's)")
	fs.Int64Var(&s.exp, "download-expiration", 0, "presigned URL lifetime, seconds")
	fs.BoolVar(&s.public, "public", false, "anyone may read the files")
	fs.BoolVar(&s.presign, "presigned-urls", false, "presigned URLs allowed")
	fs.BoolVar(&s.inline, "allow-inline", false, "serve script-capable types inline")
	fs.StringVar(&s.cacheControl, "cache-control", "", "Cache-Control of anonymous downloads (the others: private)")
	fs.BoolVar(&s.cacheShared, "cache-control-shared", false, "send Cache-Control and Surrogate-Control on every download, credentialed ones too (a CDN may store them)")
	fs.StringSliceVar(&s.mime, "allowed-mime-types", nil, "MIME types accepted (type/* patterns); empty: any")
	return cmd
}

// writeBucket creates bucket id (verb "create") or updates it with set.
func (c *adminConfig) writeBucket(ctx context.Context, verb, id string, set *adminv1.BucketSettings) (*adminv1.Bucket, error) {
	if verb == "create" {
		res, err := c.buckets().CreateBucket(ctx, req(&adminv1.CreateBucketRequest{Id: id, Settings: set}))
		if err != nil {
			return nil, err
		}
		return res.Msg.GetBucket(), nil
	}
	res, err := c.buckets().UpdateBucket(ctx, req(&adminv1.UpdateBucketRequest{Id: id, Settings: set}))
	if err != nil {
		return nil, err
	}
	return res.Msg.GetBucket(), nil
}

// ifChanged runs fn if changed.
func ifChanged(changed bool, fn func()) {
	if changed {
		fn()
	}
}

// rulesCmd is `coffer admin rules`.
func rulesCmd(c *adminConfig) *cobra.Command {
	get := leaf("get", "Show the rules in force (JSON)", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		res, err := c.rules().GetRules(cmd.Context(), req(&adminv1.GetRulesRequest{}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return [][]string{{res.Msg.GetDocument()}} })
	})
	validate := leaf("validate FILE", "Check a rules file (YAML or JSON; - for stdin) without installing it", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		doc, err := readDocument(a[0])
		if err != nil {
			return err
		}
		res, err := c.rules().ValidateRules(cmd.Context(), req(&adminv1.ValidateRulesRequest{Document: doc}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return lines("VALID", a[0]) })
	})
	put := leaf("put FILE", "Install a rules file (YAML or JSON; - for stdin)", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		doc, err := readDocument(a[0])
		if err != nil {
			return err
		}
		res, err := c.rules().PutRules(cmd.Context(), req(&adminv1.PutRulesRequest{Document: doc}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return [][]string{{res.Msg.GetDocument()}} })
	})
	return group("rules", "Permission rules", get, validate, put, rulesCheckCmd(c))
}

// rulesCheckCmd is `rules check --role R --action A [--user U] [--bucket B] [--file ID]
// [--session k=v]... [--name N --size S --mime-type T --metadata JSON]`.
func rulesCheckCmd(c *adminConfig) *cobra.Command {
	var q adminv1.CheckAccessRequest
	check := leaf("check", "Say whether a role may read, create, update or delete, which rule decides and why", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			res, err := c.rules().CheckAccess(cmd.Context(), req(&q))
			if err != nil {
				return err
			}
			return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string {
				return [][]string{{"ALLOWED", "RULE", "REASON"}, {strconv.FormatBool(res.Msg.GetAllowed()), res.Msg.GetRule(), res.Msg.GetReason()}}
			})
		})
	f := check.Flags()
	f.StringVar(&q.Role, "role", "", "the role (x-hasura-role)")
	f.StringVar(&q.Action, "action", "", "read, create, update or delete")
	f.StringVar(&q.UserId, "user", "", "the user id (x-hasura-user-id)")
	f.StringVar(&q.BucketId, "bucket", "", "the bucket (may be left out with --file)")
	f.StringVar(&q.FileId, "file", "", "a stored file to check against the rule's filter")
	f.StringToStringVar(&q.Session, "session", nil, "more session variables, x-hasura-name=value")
	f.StringVar(&q.Name, "name", "", "create: the new file's name; update: a new name")
	f.Int64Var(&q.Size, "size", 0, "create: the new file's size in bytes")
	f.StringVar(&q.MimeType, "mime-type", "", "create: the new file's MIME type")
	f.StringVar(&q.MetadataJson, "metadata", "", "create: the new file's metadata (JSON object)")
	return check
}
