// Who an SMS says it is from: 3–11 letters or digits with at least one letter (an alphanumeric sender), or
// up to 15 digits (a number).
const alphanumericSender = /^(?=.*[A-Za-z])[A-Za-z0-9]{3,11}$/;
const numericSender = /^[0-9]{1,15}$/;

export const isValidSender = (sender: string): boolean =>
  alphanumericSender.test(sender) || numericSender.test(sender);
