//! `groupby` results as Jinja2 has them: a list of `(grouper, list)` named tuples.
//!
//! MiniJinja's groups behave the same when iterated, unpacked or asked for `.grouper`
//! and `.list`, but print as lists (`[1, [...]]`). Each group is rewrapped as a tuple
//! that also answers to those names, so `{{ x|groupby('a')|list }}` prints
//! `[(1, [...])]` as Python does.

use std::sync::Arc;

use minijinja::value::{Enumerator, Kwargs, Object, ObjectRepr, Rest, Value};
use minijinja::{Error, State};

/// Registers the wrapping `groupby` filter.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    let builtin = Value::from_function(minijinja::filters::groupby);
    env.add_filter(
        "groupby",
        move |state: &mut State, value: Value, args: Rest<Value>, kwargs: Kwargs| {
            let mut call = vec![value];
            call.extend(args.0);
            if kwargs.args().next().is_some() {
                call.push(Value::from(kwargs));
            }
            let groups = builtin.call(state, &call)?;
            let wrapped: Result<Vec<Value>, Error> = groups
                .try_iter()?
                .map(|group| {
                    Ok(Value::from_object(Group {
                        grouper: group.get_item(&Value::from(0))?,
                        list: group.get_item(&Value::from(1))?,
                    }))
                })
                .collect();
            Ok(Value::from(wrapped?))
        },
    );
}

/// One group: a 2-tuple with named fields.
#[derive(Debug)]
struct Group {
    grouper: Value,
    list: Value,
}

impl Object for Group {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match (key.as_str(), key.as_i64()) {
            (Some("grouper"), _) | (_, Some(0 | -2)) => Some(self.grouper.clone()),
            (Some("list"), _) | (_, Some(1 | -1)) => Some(self.list.clone()),
            _ => None,
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(2)
    }
}

/// Whether `value` is a `groupby` group (printed as a tuple).
pub(crate) fn is_group(value: &Value) -> bool {
    value.downcast_object_ref::<Group>().is_some()
}
