// Package coffer is the domain of the storage service: the types every other
// package speaks, the error codes they fail with, and the checks on untrusted names
// and ids. It does no I/O and knows no transport, database or storage backend.
//
// What it holds:
//
//   - Domain types: Bucket, File (with FileUpdate, ListOptions, Page), Principal,
//     Event, Subscription and Delivery of the webhook outbox, Rejection (an upload
//     the virus scanner refused), Tenant with its Quota and Usage, Site as the
//     metadata store keeps it, and Expr, the compiled filter of access rules: the
//     access package builds it, Match evaluates it in memory and the metadata
//     stores translate it to SQL.
//     They carry no wire tags (TestDomainTypesHaveNoJSONTags): each wire format is a
//     DTO in the package that speaks it (api/hasura, webhook/payload, rpcapi).
//   - Errors: Error carries a code (EINVALID, ENOTFOUND, EQUOTA...) for machines, a
//     message safe to show to clients, the cause (logged, never shown) and, for
//     EINVALID, the input Field at fault. Internal wraps backend failures so that
//     clients see only "internal error". The codes are mapped once per protocol:
//     to HTTP statuses in internal/httpserve (statusOf), to Connect/gRPC codes in
//     rpcapi (codeOf). Codes cross the wire: never rename or reuse one; a new code
//     needs a row in both tables (rpcapi's TestCodeOfEveryKind checks its table;
//     a code missing from statusOf answers 500).
//   - Validation of untrusted input: CleanName (file names: NFC, no control,
//     bidirectional or invisible characters, no "..", absolute or Windows paths,
//     MaxNameBytes), ValidateBucketID, ParseFileID and NewFileID, ValidateMetadata,
//     DecodeDocument (strict JSON documents), and the media type rules that decide
//     how a file may be served: ActiveType, PassiveType, StoredType (declared vs
//     sniffed type) and SandboxCSP. CleanName, ValidateMetadata, ActiveType and
//     StoredType are fuzzed.
//
// What must not be imported here: any other coffer package (the layers import
// this one, never the other way), database drivers, storage SDKs, Prometheus, protobuf or any face's package.
// The package stays on the standard library (net/http only for its content
// sniffer, encoding/json only to check documents) and two small libraries
// (github.com/google/uuid, golang.org/x/text/unicode/norm), so that every layer,
// a tool or a test can import the domain without pulling in infrastructure
// (TestDomainDependsOnLittle checks it).
package coffer
