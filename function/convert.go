package function

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"
)

// toStruct converts a typed object into the Struct of the response.
//
// The result is exactly what the API machinery's converter
// (runtime.DefaultUnstructuredConverter.ToUnstructured) followed by
// structpb.NewStruct gives, which follows the types' JSON tags: zero
// numbers are omitted where the API omits them, and an empty emptyDir stays
// {} (a volume must keep its source). Fields the API server owns — an empty
// status, an empty metadata — are dropped so that server-side apply never
// claims them.
//
// It takes one pass instead of two, with no intermediate map, and takes the
// protobuf values from a few large blocks instead of one allocation each:
// this conversion was the largest cost of RunFunction.
func (e *encoder) toStruct(o runtime.Object) (*structpb.Struct, error) {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, errors.Errorf("cannot convert object: ToUnstructured requires a non-nil pointer to an object, got %v", v.Type())
	}
	v = v.Elem()
	p := planOf(v.Type())
	if p.kind != reflect.Struct || p.custom() {
		return nil, errors.Errorf("cannot convert object: %v is not a plain struct", v.Type())
	}
	s := e.newStruct(min(len(p.fields), 8))
	if err := e.structInto(p, v, s.Fields); err != nil {
		return nil, err
	}
	dropNullTimestamp(s.Fields)
	if spec := s.Fields["spec"].GetStructValue(); spec != nil {
		if tmpl := spec.Fields["template"].GetStructValue(); tmpl != nil {
			dropNullTimestamp(tmpl.Fields)
		}
	}
	if st := s.Fields["status"].GetStructValue(); st != nil && len(st.Fields) == 0 {
		delete(s.Fields, "status")
	}
	return s, nil
}

// dropNullTimestamp deletes a null metadata.creationTimestamp, then the
// metadata if nothing is left. (k8s.io/apimachinery tags the field
// omitzero, so a zero timestamp is normally not there at all.)
func dropNullTimestamp(obj map[string]*structpb.Value) {
	md := obj["metadata"].GetStructValue()
	if md == nil {
		return
	}
	if v, ok := md.Fields["creationTimestamp"]; ok {
		if _, null := v.GetKind().(*structpb.Value_NullValue); null {
			delete(md.Fields, "creationTimestamp")
		}
	}
	if len(md.Fields) == 0 {
		delete(obj, "metadata")
	}
}

// structError is an error structpb.NewStruct would return (a string that
// is not UTF-8): RunFunction reports it as the SDK did.
type structError struct{ err error }

func (e structError) Error() string { return e.err.Error() }

func invalidUTF8(s string) error {
	_, err := structpb.NewValue(s)
	return structError{err}
}

// A typePlan is what the converter needs to know of a type, computed once.
type typePlan struct {
	kind reflect.Kind
	// How values of this type convert themselves, if they do.
	unstructuredConverter, ptrUnstructuredConverter bool
	jsonMarshaler, ptrJSONMarshaler                 bool
	// fields of a struct; elem of a pointer, slice or map.
	fields []fieldPlan
	elem   *typePlan
	// stringKeys: a map whose keys are strings; bytes: a []byte.
	stringKeys, bytes bool
}

func (p *typePlan) custom() bool {
	return p.unstructuredConverter || p.ptrUnstructuredConverter || p.jsonMarshaler || p.ptrJSONMarshaler
}

// A fieldPlan is one struct field, read from its JSON tag as the converter
// reads it.
type fieldPlan struct {
	index     int
	name      string
	skip      bool // json:"-"
	inline    bool // no name: an embedded struct
	omitempty bool
	omitzero  func(reflect.Value) bool
	kind      reflect.Kind
	plan      *typePlan
	validName bool // UTF-8, as a Struct's keys must be
}

// unstructuredConverter is the interface of types that convert themselves
// (resource.Quantity, intstr.IntOrString, metav1.Time, ...).
type unstructuredConverter interface {
	json.Marshaler
	ToUnstructured() any
}

type isZeroer interface{ IsZero() bool }

var (
	marshalerType             = reflect.TypeFor[json.Marshaler]()
	unstructuredConverterType = reflect.TypeFor[unstructuredConverter]()
	isZeroerType              = reflect.TypeFor[isZeroer]()

	// plans is copied on write: types are few and fixed.
	plans   atomic.Pointer[map[reflect.Type]*typePlan]
	plansMu sync.Mutex
)

func planOf(t reflect.Type) *typePlan {
	if m := plans.Load(); m != nil {
		if p, ok := (*m)[t]; ok {
			return p
		}
	}
	plansMu.Lock()
	defer plansMu.Unlock()
	m := map[reflect.Type]*typePlan{}
	if old := plans.Load(); old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	p := buildPlan(t, m)
	plans.Store(&m)
	return p
}

// buildPlan adds the plan of t, and of every type it contains, to m. A plan
// enters m before its parts are planned, so recursive types end.
func buildPlan(t reflect.Type, m map[reflect.Type]*typePlan) *typePlan {
	if p, ok := m[t]; ok {
		return p
	}
	p := &typePlan{
		kind:                     t.Kind(),
		jsonMarshaler:            t.Implements(marshalerType),
		ptrJSONMarshaler:         reflect.PointerTo(t).Implements(marshalerType),
		unstructuredConverter:    t.Implements(unstructuredConverterType),
		ptrUnstructuredConverter: reflect.PointerTo(t).Implements(unstructuredConverterType),
	}
	m[t] = p
	switch t.Kind() {
	case reflect.Pointer:
		p.elem = buildPlan(t.Elem(), m)
	case reflect.Slice:
		p.bytes = t.Elem().Kind() == reflect.Uint8
		p.elem = buildPlan(t.Elem(), m)
	case reflect.Map:
		p.stringKeys = t.Key().Kind() == reflect.String
		p.elem = buildPlan(t.Elem(), m)
	case reflect.Struct:
		p.fields = make([]fieldPlan, t.NumField())
		for i := range p.fields {
			f := t.Field(i)
			fp := fieldPlan{index: i, kind: f.Type.Kind()}
			if tag := f.Tag.Get("json"); tag == "" {
				if !f.Anonymous {
					fp.name = f.Name
				}
			} else {
				items := strings.Split(tag, ",")
				fp.name = items[0]
				if fp.name == "" && !f.Anonymous {
					fp.name = f.Name
				}
				for _, opt := range items[1:] {
					switch opt {
					case "omitempty":
						fp.omitempty = true
					case "omitzero":
						fp.omitzero = omitZeroFunc(f.Type)
					}
				}
			}
			fp.skip = fp.name == "-"
			fp.validName = utf8.ValidString(fp.name)
			fp.inline = fp.name == ""
			fp.plan = buildPlan(f.Type, m)
			p.fields[i] = fp
		}
	}
	return p
}

// isEmpty is omitempty's test, as the converter has it.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Map, reflect.Slice:
		return v.IsNil() || v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// omitZeroFunc is omitzero's test, as the converter has it: the type's
// IsZero method, else reflect's.
func omitZeroFunc(t reflect.Type) func(reflect.Value) bool {
	isNil := func(v reflect.Value) bool {
		switch v.Kind() {
		case reflect.Chan, reflect.Func, reflect.Map, reflect.Pointer, reflect.UnsafePointer, reflect.Interface, reflect.Slice:
			return v.IsNil()
		}
		return false
	}
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return isNil(v) || (v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) || v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return isNil(v) || v.Interface().(isZeroer).IsZero() }
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	default:
		return reflect.Value.IsZero
	}
}

// encoder builds the protobuf values of one response. It hands out values
// from blocks it allocates a few hundred at a time; the blocks live as long
// as the response does.
type encoder struct {
	values  []structpb.Value
	strings []structpb.Value_StringValue
	numbers []structpb.Value_NumberValue
	bools   []structpb.Value_BoolValue
	nulls   []structpb.Value_NullValue
	structs []structpb.Struct
	svalues []structpb.Value_StructValue
	lists   []structpb.ListValue
	lvalues []structpb.Value_ListValue
	ptrs    []*structpb.Value
}

// take returns the next element of *block, allocating a new block of n
// when it is used up.
func take[T any](block *[]T, n int) *T {
	if len(*block) == 0 {
		*block = make([]T, n)
	}
	v := &(*block)[0]
	*block = (*block)[1:]
	return v
}

func (e *encoder) str(s string) (*structpb.Value, error) {
	if !utf8.ValidString(s) {
		return nil, invalidUTF8(s)
	}
	k := take(&e.strings, 128)
	k.StringValue = s
	v := take(&e.values, 256)
	v.Kind = k
	return v, nil
}

func (e *encoder) number(f float64) *structpb.Value {
	k := take(&e.numbers, 32)
	k.NumberValue = f
	v := take(&e.values, 256)
	v.Kind = k
	return v
}

func (e *encoder) boolean(b bool) *structpb.Value {
	k := take(&e.bools, 32)
	k.BoolValue = b
	v := take(&e.values, 256)
	v.Kind = k
	return v
}

func (e *encoder) null() *structpb.Value {
	v := take(&e.values, 256)
	v.Kind = take(&e.nulls, 16)
	return v
}

// newStruct returns a Struct with room for n fields. Callers building a
// struct's fields pass at most 8: most objects set few of their type's
// many optional fields, and a map of up to 8 entries is a single group.
func (e *encoder) newStruct(n int) *structpb.Struct {
	s := take(&e.structs, 64)
	s.Fields = make(map[string]*structpb.Value, n)
	return s
}

func (e *encoder) structValue(s *structpb.Struct) *structpb.Value {
	k := take(&e.svalues, 64)
	k.StructValue = s
	v := take(&e.values, 256)
	v.Kind = k
	return v
}

func (e *encoder) list(n int) (*structpb.Value, []*structpb.Value) {
	if len(e.ptrs) < n {
		e.ptrs = make([]*structpb.Value, max(n, 256))
	}
	vals := e.ptrs[:n:n]
	e.ptrs = e.ptrs[n:]
	l := take(&e.lists, 32)
	l.Values = vals
	k := take(&e.lvalues, 32)
	k.ListValue = l
	v := take(&e.values, 256)
	v.Kind = k
	return v, vals
}

// encode converts one value, as the converter's toUnstructured followed by
// structpb.NewValue would. Nothing (a nil pointer, map or slice) is null.
func (e *encoder) encode(p *typePlan, v reflect.Value) (*structpb.Value, error) {
	if p.custom() {
		u, err := customToUnstructured(p, v)
		if err != nil {
			return nil, err
		}
		val, err := structpb.NewValue(u)
		if err != nil {
			return nil, structError{err}
		}
		return val, nil
	}
	switch p.kind {
	case reflect.String:
		return e.str(v.String())
	case reflect.Bool:
		return e.boolean(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return e.number(float64(v.Int())), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := v.Uint()
		if u > math.MaxInt64 {
			return nil, errors.Errorf("cannot convert object: unsigned value %d does not fit into int64 (overflow)", u)
		}
		return e.number(float64(u)), nil
	case reflect.Float32, reflect.Float64:
		return e.number(v.Float()), nil
	case reflect.Map:
		if v.IsNil() {
			return e.null(), nil
		}
		if !p.stringKeys {
			return nil, errors.Errorf("cannot convert object: cannot convert map to: interface")
		}
		s := e.newStruct(v.Len())
		it := v.MapRange()
		for it.Next() {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return nil, invalidUTF8(k)
			}
			val, err := e.encode(p.elem, it.Value())
			if err != nil {
				return nil, err
			}
			s.Fields[k] = val
		}
		return e.structValue(s), nil
	case reflect.Slice:
		if v.IsNil() {
			return e.null(), nil
		}
		if p.bytes {
			return e.str(base64.StdEncoding.EncodeToString(v.Bytes()))
		}
		lv, vals := e.list(v.Len())
		for i := range vals {
			val, err := e.encode(p.elem, v.Index(i))
			if err != nil {
				return nil, err
			}
			vals[i] = val
		}
		return lv, nil
	case reflect.Pointer:
		if v.IsNil() {
			return e.null(), nil
		}
		return e.encode(p.elem, v.Elem())
	case reflect.Struct:
		s := e.newStruct(min(len(p.fields), 8))
		if err := e.structInto(p, v, s.Fields); err != nil {
			return nil, err
		}
		return e.structValue(s), nil
	case reflect.Interface:
		if v.IsNil() {
			return e.null(), nil
		}
		return e.encode(planOf(v.Elem().Type()), v.Elem())
	default:
		return nil, errors.Errorf("cannot convert object: unrecognized type: %v", p.kind)
	}
}

// structInto adds the fields of struct v to fields, as the converter's
// structToUnstructured does: primitive fields are taken as they are, the
// others through encode, and embedded structs are flattened.
func (e *encoder) structInto(p *typePlan, v reflect.Value, fields map[string]*structpb.Value) error {
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.Field(f.index)
		switch {
		case f.skip:
			continue
		case f.omitempty && isEmpty(fv):
			continue
		case f.omitzero != nil && f.omitzero(fv):
			continue
		case f.inline:
			fp := f.plan
			if fp.kind == reflect.Pointer && !fp.custom() {
				if fv.IsNil() {
					continue
				}
				fv, fp = fv.Elem(), fp.elem
			}
			if fp.kind != reflect.Struct || fp.custom() {
				return errors.Errorf("cannot convert object: cannot inline %v", fv.Type())
			}
			if err := e.structInto(fp, fv, fields); err != nil {
				return err
			}
			continue
		}
		var val *structpb.Value
		var err error
		switch f.kind {
		case reflect.String:
			val, err = e.str(fv.String())
		case reflect.Bool:
			val = e.boolean(fv.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			val = e.number(float64(fv.Int()))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			val = e.number(float64(fv.Uint()))
		case reflect.Float32, reflect.Float64:
			val = e.number(fv.Float())
		default:
			val, err = e.encode(f.plan, fv)
		}
		if err != nil {
			return err
		}
		if !f.validName {
			return invalidUTF8(f.name)
		}
		fields[f.name] = val
	}
	return nil
}

// customToUnstructured is the converter's path for types that convert
// themselves: ToUnstructured when they have it, else their JSON.
func customToUnstructured(p *typePlan, v reflect.Value) (any, error) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, nil
	}
	switch {
	case p.unstructuredConverter:
		return v.Interface().(unstructuredConverter).ToUnstructured(), nil
	case p.ptrUnstructuredConverter && v.CanAddr():
		return v.Addr().Interface().(unstructuredConverter).ToUnstructured(), nil
	}
	var m json.Marshaler
	switch {
	case p.jsonMarshaler:
		m = v.Interface().(json.Marshaler)
	case p.ptrJSONMarshaler && v.Kind() != reflect.Pointer && v.CanAddr():
		m = v.Addr().Interface().(json.Marshaler)
	default:
		return nil, errors.Errorf("cannot convert object: provided type cannot be converted: %v", v.Type())
	}
	data, err := m.MarshalJSON()
	if err != nil {
		return nil, errors.Wrap(err, "cannot convert object")
	}
	switch {
	case len(data) == 0:
		return nil, errors.New("cannot convert object: error decoding from json: empty value")
	case bytes.Equal(data, []byte("null")):
		return nil, nil
	case bytes.Equal(data, []byte("true")):
		return true, nil
	case bytes.Equal(data, []byte("false")):
		return false, nil
	case data[0] == '"':
		var s string
		return s, unmarshalNumbers(data, &s)
	case data[0] == '{':
		m := map[string]any{}
		return m, unmarshalNumbers(data, &m)
	case data[0] == '[':
		l := []any{}
		return l, unmarshalNumbers(data, &l)
	default:
		var i int64
		if err := unmarshalNumbers(data, &i); err == nil {
			return i, nil
		}
		var f float64
		return f, unmarshalNumbers(data, &f)
	}
}

// unmarshalNumbers decodes JSON keeping numbers as json.Number, and refuses
// trailing data.
func unmarshalNumbers(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return errors.Wrap(err, "cannot convert object")
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("cannot convert object: unexpected trailing data")
	}
	return nil
}

func init() {
	// Plan the composed kinds up front, so that no request pays for it.
	for _, o := range []runtime.Object{&batchv1.Job{}, &corev1.Pod{}, &corev1.Service{}, &corev1.ConfigMap{}, &corev1.Secret{}} {
		planOf(reflect.TypeOf(o).Elem())
	}
}
