//! The macro that turns the hook table in `mod.rs` into event types.
//!
//! Field kinds:
//! - `set f: T`   writable by handlers: a `pub` field, starts at `T::default()`;
//! - `get f: T`   read-only, getter returns `&T`;
//! - `val f: T`   read-only `Copy` value, getter returns `T`;
//! - `str f`      read-only `String`, getter returns `&str`;
//! - `ostr f`     read-only `Option<String>`, getter returns `Option<&str>`;
//! - `oval f: T`  read-only `Option<T>` of a `Copy` type, getter returns `Option<T>`;
//! - `hide f: T`  private, starts at `T::default()`, written through methods.
//!
//! Every read-only field is a parameter of the generated `new`, in order.

/// Builds one event struct, its getters and its constructor by munching the
/// field list into four accumulators: fields, getters, `new` parameters and
/// `new` initializers.
macro_rules! event_struct {
    (@munch {$($attr:tt)*} $ty:ident [$($fields:tt)*] [$($getters:tt)*] [$($params:tt)*] [$($inits:tt)*]) => {
        $($attr)*
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub struct $ty { $($fields)* }

        impl $ty {
            /// Builds the event from its read-only fields; writable fields
            /// start at their defaults.
            #[allow(clippy::too_many_arguments, clippy::new_without_default)]
            pub fn new($($params)*) -> Self {
                $ty { $($inits)* }
            }

            $($getters)*
        }
    };
    (@munch {$($attr:tt)*} $ty:ident [$($fields:tt)*] [$($getters:tt)*] [$($params:tt)*] [$($inits:tt)*]
        set $f:ident : $t:ty, $($rest:tt)*) => {
        event_struct!(@munch {$($attr)*} $ty
            [$($fields)* #[doc = field_doc!($f)] pub $f: $t,]
            [$($getters)*]
            [$($params)*]
            [$($inits)* $f: Default::default(),]
            $($rest)*);
    };
    (@munch {$($attr:tt)*} $ty:ident [$($fields:tt)*] [$($getters:tt)*] [$($params:tt)*] [$($inits:tt)*]
        hide $f:ident : $t:ty, $($rest:tt)*) => {
        event_struct!(@munch {$($attr)*} $ty
            [$($fields)* $f: $t,]
            [$($getters)*]
            [$($params)*]
            [$($inits)* $f: Default::default(),]
            $($rest)*);
    };
    (@munch {$($attr:tt)*} $ty:ident [$($fields:tt)*] [$($getters:tt)*] [$($params:tt)*] [$($inits:tt)*]
        get $f:ident : $t:ty, $($rest:tt)*) => {
        event_struct!(@munch {$($attr)*} $ty
            [$($fields)* $f: $t,]
            [$($getters)* #[doc = field_doc!($f)] pub fn $f(&self) -> &$t { &self.$f }]
            [$($params)* $f: $t,]
            [$($inits)* $f,]
            $($rest)*);
    };
    (@munch {$($attr:tt)*} $ty:ident [$($fields:tt)*] [$($getters:tt)*] [$($params:tt)*] [$($inits:tt)*]
        val $f:ident : $t:ty, $($rest:tt)*) => {
        event_struct!(@munch {$($attr)*} $ty
            [$($fields)* $f: $t,]
            [$($getters)* #[doc = field_doc!($f)] pub fn $f(&self) -> $t { self.$f }]
            [$($params)* $f: $t,]
            [$($inits)* $f,]
            $($rest)*);
    };
    (@munch {$($attr:tt)*} $ty:ident [$($fields:tt)*] [$($getters:tt)*] [$($params:tt)*] [$($inits:tt)*]
        oval $f:ident : $t:ty, $($rest:tt)*) => {
        event_struct!(@munch {$($attr)*} $ty
            [$($fields)* $f: Option<$t>,]
            [$($getters)* #[doc = field_doc!($f)] pub fn $f(&self) -> Option<$t> { self.$f }]
            [$($params)* $f: Option<$t>,]
            [$($inits)* $f,]
            $($rest)*);
    };
    (@munch {$($attr:tt)*} $ty:ident [$($fields:tt)*] [$($getters:tt)*] [$($params:tt)*] [$($inits:tt)*]
        str $f:ident, $($rest:tt)*) => {
        event_struct!(@munch {$($attr)*} $ty
            [$($fields)* $f: String,]
            [$($getters)* #[doc = field_doc!($f)] pub fn $f(&self) -> &str { &self.$f }]
            [$($params)* $f: impl Into<String>,]
            [$($inits)* $f: $f.into(),]
            $($rest)*);
    };
    (@munch {$($attr:tt)*} $ty:ident [$($fields:tt)*] [$($getters:tt)*] [$($params:tt)*] [$($inits:tt)*]
        ostr $f:ident, $($rest:tt)*) => {
        event_struct!(@munch {$($attr)*} $ty
            [$($fields)* $f: Option<String>,]
            [$($getters)* #[doc = field_doc!($f)] pub fn $f(&self) -> Option<&str> { self.$f.as_deref() }]
            [$($params)* $f: Option<String>,]
            [$($inits)* $f,]
            $($rest)*);
    };
}

/// The crate that emits events of an [`Emitter`] variant.
macro_rules! emitter_crate {
    (Loop) => {
        "zidane-loop"
    };
    (Agent) => {
        "zidane-agent"
    };
    (Mcp) => {
        "zidane-mcp"
    };
    (CacheTelemetry) => {
        "zidane-cache-telemetry"
    };
    (Adapter) => {
        "observability and durable-runtime adapters"
    };
}

/// Whether a field kind is written by handlers.
macro_rules! writable {
    (set) => {
        true
    };
    (hide) => {
        true
    };
    ($other:ident) => {
        false
    };
}

/// The whole vocabulary: event structs, `HookEvent` impls, the bubbled
/// `child:*` aliases and the catalogue.
/// `planned` marks a hook that nothing emits yet (`cargo xtask codegen
/// --check` keeps the mark true).
macro_rules! emitted {
    () => {
        true
    };
    (planned) => {
        false
    };
}

macro_rules! hooks {
    (
        $(
            #[doc = $summary:literal]
            $(#[doc = $more:literal])*
            $name:literal => $ty:ident by $emitter:ident $(, $planned:ident)? {
                $($kind:ident $f:ident $(: $t:ty)?,)*
            }
        )*
        ;
        $(
            #[doc = $csummary:literal]
            $cname:literal => $cty:ident = Child<$inner:ident> by $cemitter:ident, mutable: $cmut:literal $(, $cplanned:ident)?;
        )*
    ) => {
        $(
            event_struct!(@munch {
                #[doc = concat!("`", $name, "`: ", $summary)]
                $(#[doc = $more])*
                #[doc = ""]
                #[doc = concat!("Emitted by `", emitter_crate!($emitter), "`.")]
            } $ty [] [] [] [] $($kind $f $(: $t)?,)*);

            impl HookEvent for $ty {
                const NAME: &'static str = $name;
            }
        )*

        $(
            #[doc = concat!("`", $cname, "`: ", $csummary)]
            pub type $cty = Child<$inner>;

            impl Bubble for $inner {
                const CHILD_NAME: &'static str = $cname;
            }
        )*

        /// Every hook of the vocabulary, in declaration order.
        pub static CATALOGUE: &[HookInfo] = &[
            $(
                HookInfo {
                    name: $name,
                    rust_type: stringify!($ty),
                    emitter: Emitter::$emitter,
                    mutable: false $(|| writable!($kind))*,
                    emitted: emitted!($($planned)?),
                    summary: $summary,
                    spec: HookSpec::of::<$ty>(),
                },
            )*
            $(
                HookInfo {
                    name: $cname,
                    rust_type: concat!("Child<", stringify!($inner), ">"),
                    emitter: Emitter::$cemitter,
                    mutable: $cmut,
                    emitted: emitted!($($cplanned)?),
                    summary: $csummary,
                    spec: HookSpec::of::<$cty>(),
                },
            )*
        ];

        /// The catalogue as hook specs, for [`zidane_hooks::HookMap::install`].
        pub static HOOK_SPECS: &[HookSpec] = &[
            $(HookSpec::of::<$ty>(),)*
            $(HookSpec::of::<$cty>(),)*
        ];
    };
}
