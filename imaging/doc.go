// Package imaging describes image transformations independently of the library that
// performs them: the options a request may carry (Parse, Canonical, Negotiate), the
// geometry they produce (Options.Plan), the limits a source must respect (Config), a
// bounded worker Pool, and the Engine interface that imaging/vips implements.
//
// The package is pure Go. Only imaging/vips uses cgo, and only the image worker
// coffer-imager links it: coffer serve uses imaging/remote, which runs transforms in
// that worker process, or Disabled (501) when there is no worker.
//
// A request flows like this in the HTTP layer:
//
//	o, err := imaging.Parse(r.URL.Query())           // 400 on a bad parameter
//	if o.IsZero() { serve the original }
//	o, vary := o.NegotiateFor(r.Header.Get("Accept"), file.MimeType, engine.Supports)
//	key := o.Canonical()                              // variant cache key
//	res, err := engine.Transform(ctx, src, o)         // 415, 413, 400, 503 (pool full)
//
// Options are normalised (defaults written out, irrelevant fields dropped) by Parse and
// Negotiate, so two requests that must give the same image have the same Canonical
// string: use it for cache keys and presigned-URL signatures.
package imaging
