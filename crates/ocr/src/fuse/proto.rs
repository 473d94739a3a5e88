//! The protobuf wire format, just enough to edit an ONNX model: a message is read as its
//! list of fields and written back field by field. Fields this crate does not understand
//! are kept as raw bytes, so an edited model loses nothing it did not touch.

/// One field value as it is on the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1 (8 bytes, little-endian).
    Fixed64(u64),
    /// Wire type 2: a string, bytes, a sub-message or a packed repeated field.
    Bytes(Vec<u8>),
    /// Wire type 5 (4 bytes, little-endian).
    Fixed32(u32),
}

/// One field of a message.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Field number.
    pub number: u32,
    /// Value.
    pub value: Value,
}

impl Field {
    /// A length-delimited field (string, bytes or message).
    pub fn bytes(number: u32, bytes: Vec<u8>) -> Self {
        Self { number, value: Value::Bytes(bytes) }
    }

    /// A string field.
    pub fn string(number: u32, s: &str) -> Self {
        Self::bytes(number, s.as_bytes().to_vec())
    }

    /// A varint field.
    pub fn varint(number: u32, v: u64) -> Self {
        Self { number, value: Value::Varint(v) }
    }

    /// A 32-bit float field.
    pub fn float(number: u32, v: f32) -> Self {
        Self { number, value: Value::Fixed32(v.to_bits()) }
    }

    /// The bytes of a length-delimited field.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match &self.value {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The text of a string field.
    pub fn as_str(&self) -> Option<&str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }
}

fn read_varint(data: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint longer than 10 bytes".into())
}

fn take<'a>(data: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8], String> {
    let end = pos.checked_add(n).filter(|&e| e <= data.len()).ok_or("truncated field")?;
    let s = &data[*pos..end];
    *pos = end;
    Ok(s)
}

/// Reads every field of a message.
pub fn parse(data: &[u8]) -> Result<Vec<Field>, String> {
    let mut fields = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let key = read_varint(data, &mut pos)?;
        let number = u32::try_from(key >> 3).map_err(|_| "field number out of range")?;
        let value = match key & 7 {
            0 => Value::Varint(read_varint(data, &mut pos)?),
            1 => Value::Fixed64(u64::from_le_bytes(take(data, &mut pos, 8)?.try_into().unwrap())),
            2 => {
                let n = usize::try_from(read_varint(data, &mut pos)?).map_err(|_| "length out of range")?;
                Value::Bytes(take(data, &mut pos, n)?.to_vec())
            }
            5 => Value::Fixed32(u32::from_le_bytes(take(data, &mut pos, 4)?.try_into().unwrap())),
            t => return Err(format!("unsupported wire type {t}")),
        };
        fields.push(Field { number, value });
    }
    Ok(fields)
}

/// Appends `v` as a varint.
pub fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Writes fields as a message.
pub fn encode(fields: &[Field]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields {
        let wire: u64 = match f.value {
            Value::Varint(_) => 0,
            Value::Fixed64(_) => 1,
            Value::Bytes(_) => 2,
            Value::Fixed32(_) => 5,
        };
        write_varint(&mut out, (u64::from(f.number) << 3) | wire);
        match &f.value {
            Value::Varint(v) => write_varint(&mut out, *v),
            Value::Fixed64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Bytes(b) => {
                write_varint(&mut out, b.len() as u64);
                out.extend_from_slice(b);
            }
            Value::Fixed32(v) => out.extend_from_slice(&v.to_le_bytes()),
        }
    }
    out
}

/// The integers of a repeated varint field, packed or not.
pub fn varints(fields: &[Field], number: u32) -> Result<Vec<i64>, String> {
    let mut out = Vec::new();
    for f in fields.iter().filter(|f| f.number == number) {
        match &f.value {
            Value::Varint(v) => out.push(*v as i64),
            Value::Bytes(b) => {
                let mut pos = 0;
                while pos < b.len() {
                    out.push(read_varint(b, &mut pos)? as i64);
                }
            }
            _ => return Err(format!("field {number} is not a varint")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_then_encode_gives_back_the_same_bytes() {
        let fields = vec![
            Field::varint(1, 300),
            Field::string(2, "Conv"),
            Field::float(3, 0.5),
            Field { number: 4, value: Value::Fixed64(7) },
            Field::bytes(5, encode(&[Field::varint(1, 1), Field::string(2, "x")])),
        ];
        let bytes = encode(&fields);
        assert_eq!(parse(&bytes).unwrap(), fields);
        assert_eq!(encode(&parse(&bytes).unwrap()), bytes);
    }

    #[test]
    fn repeated_varints_are_read_packed_or_not() {
        let mut packed = Vec::new();
        for v in [3u64, 300, 1] {
            write_varint(&mut packed, v);
        }
        let fields = vec![Field::bytes(1, packed), Field::varint(1, 9), Field::varint(2, 5)];
        assert_eq!(varints(&fields, 1).unwrap(), vec![3, 300, 1, 9]);
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let bytes = encode(&[Field::string(2, "hello")]);
        assert!(parse(&bytes[..bytes.len() - 1]).is_err());
        assert!(parse(&[0x80]).is_err());
    }
}
